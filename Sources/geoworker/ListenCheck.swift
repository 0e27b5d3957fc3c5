#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether the operations port can be listened on, asked before the worker touches Kafka: a port another process
/// holds would otherwise surface as the HTTP server's bare `bind` error after the worker had joined its group and
/// created its changelog topic.
enum ListenCheck {
    /// Binds `host`:`port` (as the server will, with `SO_REUSEADDR`) and lets it go at once; port 0 (any free port)
    /// always can.
    ///
    /// - Returns: why it cannot, in the settings' words, or nil.
    static func problem(host: String, port: Int) -> String? {
        guard port != 0 else { return nil }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var found: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &found)
        guard resolved == 0, let first = found else {
            return "http.host \(host) is not an address of this host (\(String(cString: gai_strerror(resolved))))"
        }
        defer { freeaddrinfo(first) }
        let descriptor = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard descriptor >= 0 else { return nil }  // No socket to try with: the server will say what it meets.
        defer { close(descriptor) }
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        guard bind(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0 else { return nil }
        let reason = errno
        let place = "\(host):\(port)"
        switch reason {
        case EADDRINUSE:
            return "the HTTP port \(place) is in use by another process: set http.port (--http-port, "
                + "GEOWORKER_HTTP_PORT) to a free port, or 0 for any free one"
        case EACCES:
            return "the HTTP port \(place) needs privileges this process lacks: set http.port (--http-port, "
                + "GEOWORKER_HTTP_PORT) to 1024 or above"
        case EADDRNOTAVAIL:
            return "http.host \(host) is not an address of this host: set http.host (--http-host, GEOWORKER_HTTP_HOST)"
        default:
            return "cannot listen on \(place) (http.host, http.port): \(String(cString: strerror(reason)))"
        }
    }
}
