#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One `GET` to a worker's operations port over a plain TCP socket, for `geoworker probe`.
///
/// No HTTP client library: the runtime image carries none (FoundationNetworking would need libcurl), and a probe
/// asks one path of a server it knows speaks HTTP/1.0.
struct HTTPProbe {
    /// What the server answered.
    struct Answer: Equatable {
        let status: Int
        let body: String
    }

    /// Why there is no answer.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let host: String
    let port: Int
    /// How long the connection and the answer may take, each.
    let timeoutMilliseconds: Int

    /// Asks `path` (with its leading slash) and reads the whole answer.
    func get(_ path: String) throws(Failure) -> Answer {
        let descriptor = try openConnection()
        defer { close(descriptor) }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { throw Failure(description: "sending the request: \(errorText())") }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while response.count < 1 << 20 {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw Failure(description: "reading the answer: \(errorText())") }
            response += chunk[0..<count]
        }
        return try Self.parse(response)
    }

    /// The status and body of an HTTP/1.x answer.
    static func parse(_ response: [UInt8]) throws(Failure) -> Answer {
        let text = String(decoding: response, as: UTF8.self)
        let statusLine = text.prefix { $0 != "\r" && $0 != "\n" }.split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
            throw Failure(description: "not an HTTP answer: \(text.prefix(80).debugDescription)")
        }
        let separator = Array("\r\n\r\n".utf8)
        let bodyStart = response.indices.first { response[$0...].starts(with: separator) }.map { $0 + 4 }
        let body = bodyStart.map { String(decoding: response[$0...], as: UTF8.self) } ?? ""
        return Answer(status: status, body: body)
    }

    private func openConnection() throws(Failure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var addresses: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &addresses)
        guard resolved == 0, let first = addresses else {
            throw Failure(description: "\(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(addresses) }
        var lastError = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let descriptor = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard descriptor >= 0 else {
                lastError = errorText()
                continue
            }
            // On Linux the send timeout bounds connect(2) as well.
            var timeout = timeval(
                tv_sec: timeoutMilliseconds / 1000,
                tv_usec: Int(timeoutMilliseconds % 1000) * 1000
            )
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if connect(descriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return descriptor }
            lastError = errorText()
            close(descriptor)
        }
        throw Failure(description: "connecting to \(host):\(port): \(lastError)")
    }

    private func errorText() -> String { String(cString: strerror(errno)) }
}
