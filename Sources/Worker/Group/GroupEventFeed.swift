import Foundation
import JSONCodec
import Kafka
public import Logging
import PartitionOffsets
public import ServiceLifecycle

/// The whole group's events for live watchers (`GET /events/stream` with `http.advertisedAddress`): read from the
/// events topic, every partition, with a consumer outside the group, and offered to an ``EventFeed`` of their own.
///
/// Each event once, by its id, though at-least-once may have sent it twice (a failover, a rewind): the ids of the
/// latest ``rememberedIds`` events are kept. The consumer reads as the worker's readers do, `read_committed` unless
/// the operator set otherwise: under exactly-once only committed events, which come when their checkpoint commits.
/// A new watcher gets the latest events first, read from before this instance started where the topic has them.
public final class GroupEventFeed: Service, Sendable {
    /// How many of the latest event ids are remembered to show each event once.
    static let rememberedIds = 200_000

    /// What the stream's watchers read.
    public let feed: EventFeed
    private let configuration: WorkerConfiguration
    private let logger: Logger

    public init(configuration: WorkerConfiguration, feed: EventFeed, logger: Logger) {
        self.configuration = configuration
        self.feed = feed
        self.logger = logger
    }

    public func run() async throws {
        defer { feed.close() }
        let topic = configuration.topics.events
        // Kafka may not be there yet at start-up: waited for, as the worker waits.
        let found = try await whileKafkaIsAway("the events topic", logger: logger) { () throws(WorkerError) in
            do {
                return try await startOffsets(of: topic)
            } catch {
                throw WorkerError(.kafka, "cannot read where the events topic \(topic) ends", underlying: error)
            }
        }
        guard let starts = found else { return }
        let consumer: Consumer
        do {
            consumer = try Consumer(
                configuration: KafkaClients.groupEventsConsumerConfiguration(configuration),
                subscription: .partitions(starts),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the events topic's consumer", underlying: error)
        }
        var seen = SeenEventIds(capacity: Self.rememberedIds)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let batch: ConsumerBatch
            do {
                batch = try await consumer.nextBatch(maxMessages: 10_000, timeout: .milliseconds(200))
            } catch {
                logger.warning("cannot read the events topic", metadata: [ServiceLogKey.error: "\(error)"])
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            var events = RecordBuffer(topic: topic)
            for record in batch {
                record.withKeyAndValue { key, value in
                    guard let value, let id = Self.eventId(in: value), seen.isNew(id) else { return }
                    events.append(key: key.map { String(decoding: $0, as: UTF8.self) } ?? "") { $0 += value }
                }
            }
            feed.offer(events)
        }
        await consumer.close()
    }

    /// Where each partition is read from: far enough back for the feed's recent events, shared among the partitions.
    private func startOffsets(of topic: String) async throws(KafkaError) -> [TopicPartition: StartOffset] {
        let asker = try Consumer(
            configuration: KafkaClients.groupEventsConsumerConfiguration(configuration),
            subscription: .partitions([:]),
            logger: logger
        )
        let asked: Result<[TopicPartition: StartOffset], KafkaError>
        do {
            let count = try await asker.partitionCount(topic: topic, timeout: TopicCheck.metadataTimeout)
            let partitions = (0..<Int32(count)).map { TopicPartition(topic, $0) }
            let ends = try await asker.offsets(.end, of: partitions)
            let back = Int64((feed.recentCapacity + count - 1) / max(1, count))
            asked = .success(
                Dictionary(
                    uniqueKeysWithValues: partitions.map { partition in
                        (partition, ends[partition].map { .offset(max(0, $0 - back)) } ?? .end)
                    }
                )
            )
        } catch {
            asked = .failure(error)
        }
        await asker.close()
        return try asked.get()
    }

    /// The CloudEvent's `id`; nil for a record that is none.
    static func eventId(in value: UnsafeRawBufferPointer) -> String? {
        var scanner = JSONScanner(value)
        do {
            guard try scanner.enterObject() else { return nil }
            var first = true
            while let key = try scanner.nextKey(first: first) {
                first = false
                if scanner.content(of: key).elementsEqual("id".utf8), let raw = try scanner.readRawString() {
                    return scanner.withContent(of: raw) { String(decoding: $0, as: UTF8.self) }
                }
                try scanner.skipValue()
            }
        } catch {
            return nil
        }
        return nil
    }
}

/// The ids of the latest events seen, at most `capacity`: whether an event is seen for the first time.
struct SeenEventIds {
    let capacity: Int
    private var ids: Set<String> = []
    private var order: [String] = []
    private var oldest = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Whether `id` is new, remembering it.
    mutating func isNew(_ id: String) -> Bool {
        guard ids.insert(id).inserted else { return false }
        if order.count < capacity {
            order.append(id)
        } else {
            ids.remove(order[oldest])
            order[oldest] = id
            oldest = (oldest + 1) % capacity
        }
        return true
    }
}
