import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// Asks another instance of the group for its own part of an answer, over its operations port: with this
/// instance's bearer token (the group shares `http.token`), and marked as asked by a peer, so that the other instance
/// answers from its own devices only and never asks on.
struct PeerClient: Sendable {
    /// The header a peer's question carries; `scope=local` in the query does the same for an operator.
    static let scopeHeader = "X-Geoworker-Scope"

    /// What a peer answered.
    enum Outcome: Sendable {
        case answered(status: Int, body: [UInt8], retryAfter: String?)
        /// No answer within the bound, or no connection: why, in words.
        case failed(String)
    }

    let client: HTTPClient
    let token: String?
    /// How long one peer may take (`http.peerTimeoutMs`).
    let timeout: Duration

    /// GETs `path` (with its query) of the instance at `address`, within ``timeout``, with `scope=local`.
    func get(_ address: String, _ path: String) async -> Outcome {
        let url = address + path + (path.contains("?") ? "&" : "?") + "scope=local"
        let (client, token, deadline) = (client, token, timeout)
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                var request = HTTPClientRequest(url: url)
                if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                do {
                    let response = try await client.execute(request, timeout: .milliseconds(deadline.milliseconds))
                    let body = try await response.body.collect(upTo: 256 << 20)
                    return .answered(
                        status: Int(response.status.code),
                        body: Array(buffer: body),
                        retryAfter: response.headers.first(name: "Retry-After")
                    )
                } catch {
                    return Task.isCancelled ? nil : .failed("\(error)")
                }
            }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return Task.isCancelled
                    ? nil : .failed("no answer within \(deadline.milliseconds) ms (http.peerTimeoutMs)")
            }
            defer { group.cancelAll() }
            while let outcome = await group.next() {
                if let outcome { return outcome }
            }
            return .failed("no answer")
        }
    }
}

extension Duration {
    /// Whole milliseconds.
    fileprivate var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
