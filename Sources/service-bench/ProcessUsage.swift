// CPU time and page faults of the benchmark's own process (the mock broker's) and of the workers it waited for.
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
