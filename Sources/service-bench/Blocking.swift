import Foundation

/// Runs `body` on Swift's cooperative pool and waits on this thread for what it gives: the bench's parts are
/// synchronous, the brokers and servers it starts are not.
func blockingResult<T: Sendable>(of body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
    let finished = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>!
    Task {
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        finished.signal()
    }
    finished.wait()
    return result
}
