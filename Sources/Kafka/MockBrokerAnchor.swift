#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection a mock broker has accepted, held while the broker is taken down, so that its port stays owned.
///
/// librdkafka 2.0.2's `rd_kafka_mock_broker_set_down` closes the broker's listener and at once binds a new socket to the
/// same port, keeping it for the broker's return; when that bind fails it aborts the process. In the instant between
/// the two, a port that no connection holds any more is free for any other socket's `bind(0)` (with sockets bound and
/// closed around it, this machine's kernel gave the port away about once in 86,000 such rebinds, and the whole test
/// suite died on it twice in one hour). A connection the broker accepted keeps the port owned through that instant, and
/// does not stand in the rebind's way (the listener's `SO_REUSEADDR` is inherited by what it accepts).
///
/// A broker that is up answers within its answer delay; under a loaded machine's scheduling that can take longer, so
/// ``holding(port:answerDelay:)`` tries again before giving up.
final class MockBrokerAnchor {
    private let descriptor: Int32

    /// An anchor on `port`, tried up to `attempts` times, each waiting for the answer up to 2 s more than the broker's
    /// set answer delay; nil when the broker never answered (it is down, or the machine is stalled for longer).
    static func holding(port: UInt16, answerDelay: Duration, attempts: Int = 5) -> MockBrokerAnchor? {
        for _ in 0..<attempts {
            if let anchor = MockBrokerAnchor(port: port, waiting: answerDelay + .seconds(2)) { return anchor }
        }
        return nil
    }

    /// Connects to `port` on loopback and waits up to `waiting` for the broker's answer to an ApiVersions request:
    /// an answer means the broker accepted the connection (one still in its listen queue would go with the listener).
    init?(port: UInt16, waiting: Duration = .seconds(2)) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        let (seconds, attoseconds) = waiting.components
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        let request = Self.apiVersionsRequest
        guard connected, request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count
        else {
            close(descriptor)
            return nil
        }
        var answer = [UInt8](repeating: 0, count: 4)
        guard answer.withUnsafeMutableBytes({ recv(descriptor, $0.baseAddress, 4, Int32(MSG_WAITALL)) }) == 4 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// ApiVersions (key 18) version 0, correlation id 1, client id "geoworker-anchor", with its size first.
    private static let apiVersionsRequest: [UInt8] = {
        let clientId = Array("geoworker-anchor".utf8)
        var body: [UInt8] = [0, 18, 0, 0, 0, 0, 0, 1, 0, UInt8(clientId.count)] + clientId
        let size = UInt32(body.count)
        body.insert(
            contentsOf: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)],
            at: 0
        )
        return body
    }()
}
