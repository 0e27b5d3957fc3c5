import Kafka
import Logging
import PartitionOffsets
import Synchronization
import Threads

/// Asks the brokers where input partitions end, for ``EndConfirmations``, without holding up the loop: one question at
/// a time, on a thread of its own, through a consumer of its own.
///
/// Not through the group's consumer: a broker answers a connection's requests in order, so a question behind its fetch
/// in flight would wait for that fetch, up to `fetch.wait.max.ms` when nothing new arrives. The answer needs only to be
/// the brokers' view after the records it is about were polled; its own connection gives it in a round trip. The loop
/// goes on meanwhile (the records the question is about wait in the merge) and is woken from its poll by the answer.
final class EndQuestions: Sendable {
    /// The answer to one question: the brokers' ends, and the poll after which the question was asked.
    struct Answer: Sendable {
        let askedAfterPoll: Int
        let ends: [TopicPartition: Int64]
    }

    private struct State {
        var inFlight = false
        var answer: Answer?
    }

    private let thread = DedicatedThread(name: "gw-ends")
    private let state = Mutex(State())
    /// The consumer that asks, made at the first question (its settings are the group consumer's, isolation level
    /// included, so that an end means the same to both); used on `thread`.
    private let asker: Mutex<Consumer?> = Mutex(nil)
    private let configuration: ConsumerConfiguration
    private let logger: Logger

    /// - Parameters:
    ///   - configuration: the asking consumer's settings (it joins no group and reads nothing).
    ///   - logger: where a question that fails is logged.
    init(configuration: ConsumerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    deinit {
        thread.stop()
        asker.withLock { $0?.close() }
    }

    /// Asks where `partitions` end, unless a question is in flight.
    ///
    /// The loop asks again after the answer if the merge still needs it. `poll` is the loop's last poll, whose records
    /// the answer will cover; the answer wakes `consumer`'s poll.
    func ask(_ partitions: Set<TopicPartition>, afterPoll poll: Int, waking consumer: Consumer) {
        guard !partitions.isEmpty else { return }
        let asking = state.withLock { state -> Bool in
            guard !state.inFlight else { return false }
            state.inFlight = true
            return true
        }
        guard asking else { return }
        thread.execute { [self] in
            let ends = brokerEnds(of: partitions)
            state.withLock { $0.answer = Answer(askedAfterPoll: poll, ends: ends) }
            consumer.wakePoll()
        }
    }

    /// The answer that came since the last call, if any; the next question may then be asked.
    func takeAnswer() -> Answer? {
        state.withLock { state in
            guard let answer = state.answer else { return nil }
            state.answer = nil
            state.inFlight = false
            return answer
        }
    }

    /// The brokers' ends of `partitions`; none when they cannot be asked (the records then wait as behind a side caught
    /// up as far as anyone knows, `mergeWait`, and go on).
    private func brokerEnds(of partitions: Set<TopicPartition>) -> [TopicPartition: Int64] {
        do {
            let consumer = try asker.withLock { asker throws(KafkaError) -> Consumer in
                if let asker { return asker }
                let made = try Consumer(configuration: configuration, subscription: .partitions([:]), logger: logger)
                asker = made
                return made
            }
            return try consumer.offsets(.end, of: Array(partitions), timeout: .seconds(5))
        } catch {
            logger.debug("cannot ask where partitions end", metadata: [ServiceLogKey.error: "\(error)"])
            return [:]
        }
    }
}
