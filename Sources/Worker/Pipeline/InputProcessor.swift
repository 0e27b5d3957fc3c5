import Addresses
import GeoCore
import JSONCodec
import Kafka

#if canImport(Glibc)
import Glibc
#endif

/// Turns input messages into state changes and output records: the worker's core step, without I/O.
///
/// Each message is decoded from its bytes and applied to its device through the ``DeviceRegistry``; the
/// events it causes become CloudEvents records for the events topic (key = device id), and a message that
/// cannot be decoded or carried out becomes a dead-letter record holding its original key and bytes and
/// the reason. Nothing is published here: the caller sends the ``Output`` (``withOutput(_:)``) and checkpoints.
struct InputProcessor: Sendable {
    private(set) var registry: DeviceRegistry
    let topics: WorkerConfiguration.Topics
    /// How much of a refused message its dead letter carries.
    let deadLetterLimits: DeadLetter.Limits
    /// What was applied since the start, or since the counts were last moved (``moveCounts(into:)``), the events by
    /// type included.
    var counters: ProcessingCounters { counts.counters }
    private var counts = Counts()
    private let encoder: CloudEventEncoder
    private var decoder = InputDecoder()
    private var output: Output
    /// The events of the message being applied, before they are encoded.
    private var events: [DeviceEvent] = []
    /// Told of every fix applied, with `address.prefetch` on.
    ///
    /// It asks for the address of a bucket a fix entered, and never waits; nothing here reads its answers.
    private let addressPrefetch: (any AddressPrefetching)?

    /// What the messages applied since the output was last handed out gave.
    struct Output: Sendable {
        /// The events for the events topic, each encoded in place (key: the device id; the CloudEvents
        /// content type as a header), in the order their messages were applied.
        var events: RecordBuffer
        /// A record for the dead-letter topic per message that could not be decoded or carried out.
        var deadLetters: [ProducerRecord] = []

        var isEmpty: Bool { events.isEmpty && deadLetters.isEmpty }
    }

    /// The bytes of the events applied since the output was last handed out.
    var outputEventBytes: Int { output.events.byteCount }

    init(
        registry: DeviceRegistry,
        topics: WorkerConfiguration.Topics,
        deadLetterLimits: DeadLetter.Limits = DeadLetter.Limits(),
        encoder: CloudEventEncoder = CloudEventEncoder(),
        addressPrefetch: (any AddressPrefetching)? = nil
    ) {
        self.registry = registry
        self.addressPrefetch = addressPrefetch
        self.topics = topics
        self.deadLetterLimits = deadLetterLimits
        self.encoder = encoder
        self.output = Output(
            events: RecordBuffer(
                topic: topics.events,
                headers: [KafkaHeader(name: "content-type", value: CloudEventEncoder.contentType)]
            )
        )
    }

    /// Applies one input message.
    ///
    /// - Parameters:
    ///   - value: the message's bytes (nil for a tombstone).
    ///   - key: the message's key, kept on a dead-letter record.
    ///   - kind: which input topic it comes from, which says how to read it.
    ///   - origin: where it was read: its event ids derive from it.
    ///   - decoded: the message already decoded from `value` (the worker decodes a keyless message to find
    ///     its device's apply thread), so that no message is decoded twice; nil to decode it here.
    ///   - streamTime: its pair's stream time before it (``StreamClock``; `Int64.min` before the pair's first), nil for no
    ///     stream.
    mutating func process(
        value: UnsafeRawBufferPointer?,
        key: UnsafeRawBufferPointer?,
        kind: InputKind,
        origin: MessageOrigin,
        decoded: Result<InputMessage, DecodingFailure>? = nil,
        streamTime: Int64? = nil
    ) {
        guard let value, value.count > 0 else {
            deadLetter(value: value, key: key, origin: origin, reason: "empty-message", error: "the message is empty")
            return
        }
        events.removeAll(keepingCapacity: true)
        let outcome: DeviceRegistry.Outcome
        switch decoded ?? InputMessage.decode(json: value, as: kind, by: &decoder) {
        case .success(.position(let position)):
            counts.counted.positions += 1
            if !Self.isKey(key, of: position.deviceId) { counts.counted.keyNotDeviceId += 1 }
            outcome = apply(position, origin: origin, streamTime: streamTime)
        case .success(.command(let command)):
            counts.counted.commands += 1
            if !Self.isKey(key, of: command.deviceId) { counts.counted.keyNotDeviceId += 1 }
            outcome = registry.apply(command, origin: origin, events: &events)
        case .failure(let failure):
            deadLetter(value: value, key: key, origin: origin, reason: failure.reason.rawValue, error: "\(failure)")
            return
        }
        switch outcome {
        case .tracked(.applied), .tracked(.appliedWithoutGeofences): break
        case .tracked(.stale): counts.counted.stalePositions += 1
        case .alreadyApplied: counts.counted.alreadyApplied += 1
        case .tracked(.duplicate): counts.counted.duplicatePositions += 1
        case .tracked(.rejected(let why)):
            deadLetter(value: value, key: key, origin: origin, reason: "rejected", error: why)
        }
        emitEvents()
    }

    /// Announces the silence of each device of input partition `partition` whose deadline the partition's stream time
    /// `streamTime` has passed (``DeviceRegistry/announceSilences(inPartition:upTo:events:)``); counted apart when the
    /// wall clock stood in for the partition's time (`byWallClock`).
    mutating func announceSilences(inPartition partition: Int32, upTo streamTime: Int64, byWallClock: Bool = false) {
        guard registry.hasSilenceDue(inPartition: partition, at: streamTime) else { return }
        events.removeAll(keepingCapacity: true)
        let announced = registry.announceSilences(inPartition: partition, upTo: streamTime, events: &events)
        guard announced > 0 else { return }
        if byWallClock { counts.counted.silencesByWallClock += announced }
        emitEvents()
    }

    /// Encodes `events` into the output, counting them.
    private mutating func emitEvents() {
        let encoder = encoder
        for event in events {
            counts.eventsByTypeNumber[event.typeNumber] += 1
            output.events.append(key: event.deviceId) { encoder.append(event, to: &$0) }
        }
    }

    /// Applies a position to its device; with `addressPrefetch` set, tells it where the device's fix moved.
    private mutating func apply(
        _ position: Position,
        origin: MessageOrigin,
        streamTime: Int64?
    ) -> DeviceRegistry.Outcome {
        guard let addressPrefetch else {
            return registry.apply(position, origin: origin, streamTime: streamTime, events: &events)
        }
        let previous = registry.lastFixCoordinate(of: position.deviceId)
        let outcome = registry.apply(position, origin: origin, streamTime: streamTime, events: &events)
        if outcome == .tracked(.applied) || outcome == .tracked(.appliedWithoutGeofences) {
            addressPrefetch.prefetch(from: previous, to: position.coordinate)
        }
        return outcome
    }

    /// Whether a message's key is its device id, as the contract wants: the partitioner and the worker's
    /// apply threads place devices by key, so other keys can split one device's messages.
    private static func isKey(_ key: UnsafeRawBufferPointer?, of deviceId: String) -> Bool {
        guard let key else { return false }
        var deviceId = deviceId
        return deviceId.withUTF8 { id in
            id.count == key.count && (id.isEmpty || memcmp(id.baseAddress!, key.baseAddress!, id.count) == 0)
        }
    }

    /// Hands what was applied since the last call to `body` (which sends it), then empties the output and
    /// keeps its storage for the next messages.
    mutating func withOutput<Result>(_ body: (Output) throws -> Result) rethrows -> Result {
        defer {
            output.events.removeAll()
            output.deadLetters.removeAll(keepingCapacity: true)
        }
        return try body(output)
    }

    /// What the processor counted, kept cheap to add to: the events by ``DeviceEvent/typeNumber``, since a dictionary
    /// keyed by name would hash the name at every event.
    struct Counts: Sendable {
        /// The counters but for the events.
        var counted = ProcessingCounters()
        var eventsByTypeNumber = [Int](repeating: 0, count: DeviceEvent.types.count)

        var counters: ProcessingCounters {
            var counters = counted
            for (number, count) in eventsByTypeNumber.enumerated() where count > 0 {
                counters.events[DeviceEvent.types[number], default: 0] += count
            }
            return counters
        }

        static func += (total: inout Counts, part: borrowing Counts) {
            total.counted += part.counted
            for number in total.eventsByTypeNumber.indices {
                total.eventsByTypeNumber[number] += part.eventsByTypeNumber[number]
            }
        }
    }

    /// Adds what was counted since the last move to `tally`, and counts from zero again.
    mutating func moveCounts(into tally: ProcessingTally) {
        tally.add(counts)
        counts.counted = ProcessingCounters()
        // Zeroed in place: the array's storage is kept, not allocated again at every round.
        for number in counts.eventsByTypeNumber.indices { counts.eventsByTypeNumber[number] = 0 }
    }

    /// The devices whose state changed since they were last taken, `which` of them, as they are now (see
    /// ``DeviceRegistry/takeChanges(_:)``).
    mutating func takeChanges(_ which: DeviceRegistry.Changes) -> [DeviceState] { registry.takeChanges(which) }

    /// Brings the registry's grid of last fixes up to date, before a nearby or map question.
    mutating func updateLastFixes() { registry.updateLastFixes() }

    private mutating func deadLetter(
        value: UnsafeRawBufferPointer?,
        key: UnsafeRawBufferPointer?,
        origin: MessageOrigin,
        reason: String,
        error: String
    ) {
        counts.counted.deadLettered[reason, default: 0] += 1
        counts.counted.latestDeadLetter = DeadLetterNote(
            reason: reason,
            error: error,
            origin: "\(origin.topic):\(origin.partition):\(origin.offset)"
        )
        output.deadLetters.append(
            DeadLetter.record(
                topic: topics.deadLetters,
                value: value,
                key: key,
                origin: origin,
                reason: reason,
                error: error,
                limits: deadLetterLimits
            )
        )
    }
}

/// What the worker has processed since it started, for metrics and the end-of-run summary.
public struct ProcessingCounters: Hashable, Sendable {
    public var positions = 0
    public var commands = 0
    /// Positions older than (or as old as) the newest applied for their device: applied as no-ops.
    public var stalePositions = 0
    public var duplicatePositions = 0
    /// Messages skipped because their device's state already reflected them (a replay after a crash, or
    /// input that another instance applied before this one restored the device from the changelog).
    public var alreadyApplied = 0
    /// Applied messages whose Kafka key is missing or is not their deviceId (the contract keys both input
    /// topics by deviceId; other keys can split a device between apply threads or instances).
    public var keyNotDeviceId = 0
    /// Devices announced silent while the wall clock stood in for their idle partition's stream time
    /// (``StreamClock``): announcements a replay of the same input may not make.
    public var silencesByWallClock = 0
    /// Events produced, by CloudEvents type.
    public var events: [String: Int] = [:]
    /// Messages sent to the dead-letter topic, by reason.
    public var deadLettered: [String: Int] = [:]
    /// The latest of them, for the log (``DeadLetterLog``).
    public var latestDeadLetter: DeadLetterNote?

    public init() {}

    /// Adds another set of counters (the worker sums its shards' counters).
    public static func += (total: inout ProcessingCounters, part: ProcessingCounters) {
        total.positions += part.positions
        total.commands += part.commands
        total.stalePositions += part.stalePositions
        total.duplicatePositions += part.duplicatePositions
        total.alreadyApplied += part.alreadyApplied
        total.keyNotDeviceId += part.keyNotDeviceId
        total.silencesByWallClock += part.silencesByWallClock
        total.events.merge(part.events, uniquingKeysWith: +)
        total.deadLettered.merge(part.deadLettered, uniquingKeysWith: +)
        if let latest = part.latestDeadLetter { total.latestDeadLetter = latest }
    }
}

/// A message sent to the dead-letter topic, as the log names it: why, in a code and in words, and where it was read.
public struct DeadLetterNote: Hashable, Sendable {
    public let reason: String
    public let error: String
    /// `topic:partition:offset`.
    public let origin: String
}
