// CPU time and page faults of the benchmark's own process (the mock broker's) and of the workers it waited for, and
// the machine's idle time.
import Foundation

/// User and system CPU time of the children this process has waited for, in seconds.
func childrenCPUSeconds() -> Double { cpuSeconds(RUSAGE_CHILDREN.rawValue) }

/// User and system CPU time of this process (the mock broker's threads among them), in seconds.
func ownCPUSeconds() -> Double { cpuSeconds(RUSAGE_SELF.rawValue) }

/// Minor page faults (pages first touched or mapped) of the children this process has waited for.
func childrenMinorFaults() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return usage.ru_minflt
}

private func cpuSeconds(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(who, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// The whole machine's idle CPU time since boot, in seconds (`/proc/stat`: idle and waiting for I/O on every core);
/// 0 where there is no such file.
func machineIdleSeconds() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("cpu ") })
    else { return 0 }
    // cpu user nice system idle iowait ...: in clock ticks.
    let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard fields.count >= 5 else { return 0 }
    return (fields[3] + fields[4]) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
