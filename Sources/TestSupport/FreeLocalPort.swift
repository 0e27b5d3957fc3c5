import Foundation

/// A port nobody listens on now on 127.0.0.1, below the kernel's ephemeral range, for a helper program that cannot
/// take port 0 and say which it got (chromedriver, Prometheus, noida-db).
///
/// Never one the kernel hands out for port 0: librdkafka's mock brokers listen on such ports, and a test that takes a
/// mock broker down and up again binds its old port anew; a helper that took that port meanwhile would make the mock
/// abort the whole test process ("Failed to create mock broker listener").
public func freeLocalPort() throws -> Int {
    let ephemeralStart = ephemeralPortRange().lowerBound
    let candidates = max(1024, ephemeralStart - 12_000)..<ephemeralStart
    for _ in 0..<200 {
        let port = Int.random(in: candidates)
        if isFree(port) { return port }
    }
    throw NoFreePort()
}

/// The kernel's ephemeral port range (`/proc/sys/net/ipv4/ip_local_port_range`), Linux's default where unreadable.
func ephemeralPortRange() -> ClosedRange<Int> {
    let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
    let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
    guard bounds.count == 2, bounds[0] > 1024, bounds[0] <= bounds[1] else { return 32_768...60_999 }
    return bounds[0]...bounds[1]
}

/// Whether a socket can bind `port` on 127.0.0.1 now.
private func isFree(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { return false }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// No free port was found below the ephemeral range on 127.0.0.1.
public struct NoFreePort: Error {}
