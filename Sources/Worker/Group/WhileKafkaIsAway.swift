import Kafka
import Logging
import ServiceLifecycle

/// How long a service beside the worker waits before it asks Kafka again.
let kafkaRetryInterval: Duration = .seconds(3)

/// Runs `attempt` until it works, again every few seconds while it fails for a passing reason of Kafka's (unreachable,
/// timed out: a retriable ``KafkaError`` underneath), so that a service beside the worker waits for Kafka at start-up as
/// the worker does; nil when the service is stopped first.
///
/// - Throws: the attempt's error when it is not a passing one (a topic that is missing for good, a property refused).
func whileKafkaIsAway<T>(
    _ what: String,
    logger: Logger,
    _ attempt: () async throws(WorkerError) -> T
) async throws(WorkerError) -> T? {
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
        do {
            return try await attempt()
        } catch  where (error.underlying as? KafkaError)?.isRetriable == true {
            logger.warning(
                "cannot reach Kafka for \(what); trying again",
                metadata: [ServiceLogKey.error: "\(error)", ServiceLogKey.retryIn: "\(kafkaRetryInterval)"]
            )
            try? await Task.sleep(for: kafkaRetryInterval)
        }
    }
    return nil
}
