/// The states of all devices a worker holds, and which of them changed since the last checkpoint.
///
/// Still pure: it applies messages through the ``DeviceTracker`` and remembers what it must persist;
/// the caller persists ``takeChanges()`` together with the input offsets, in one transaction.
public struct DeviceRegistry: Sendable {
    /// A device whose state must be written at the next checkpoint.
    public struct ChangedDevice: Hashable, Sendable {
        public let state: DeviceState
        /// The input partition the device's messages come from (both input topics are co-partitioned).
        public let partition: Int32
        /// Its pins changed (tracked, untracked, or an announced state), not only its position or country.
        public let pinsChanged: Bool

        public init(state: DeviceState, partition: Int32, pinsChanged: Bool) {
            self.state = state
            self.partition = partition
            self.pinsChanged = pinsChanged
        }
    }

    public let tracker: DeviceTracker
    public private(set) var states: [String: DeviceState]
    private var changes: [String: (partition: Int32, pinsChanged: Bool)] = [:]

    public init(tracker: DeviceTracker, states: [DeviceState] = []) {
        self.tracker = tracker
        self.states = Dictionary(states.map { ($0.deviceId, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Applies a position to its device, appending the events it causes to `events`.
    public mutating func apply(
        _ position: Position,
        origin: MessageOrigin,
        events: inout [DeviceEvent]
    ) -> DeviceTracker.Outcome {
        let deviceId = position.deviceId
        let outcome = tracker.apply(
            position,
            origin: origin,
            to: &states[deviceId, default: DeviceState(deviceId: deviceId)],
            events: &events
        )
        record(outcome, deviceId: deviceId, partition: origin.partition)
        return outcome
    }

    /// Applies a command to its device, appending the events it causes to `events`.
    public mutating func apply(
        _ command: DeviceCommand,
        origin: MessageOrigin,
        events: inout [DeviceEvent]
    ) -> DeviceTracker.Outcome {
        let deviceId = command.deviceId
        let outcome = tracker.apply(
            command,
            origin: origin,
            to: &states[deviceId, default: DeviceState(deviceId: deviceId)],
            events: &events
        )
        record(outcome, deviceId: deviceId, partition: origin.partition)
        return outcome
    }

    /// The devices changed since the last call, in a stable order (by device id), and forgets them.
    public mutating func takeChanges() -> [ChangedDevice] {
        defer { changes.removeAll(keepingCapacity: true) }
        return changes.keys.sorted().map { deviceId in
            let change = changes[deviceId]!
            return ChangedDevice(state: states[deviceId]!, partition: change.partition, pinsChanged: change.pinsChanged)
        }
    }

    private mutating func record(_ outcome: DeviceTracker.Outcome, deviceId: String, partition: Int32) {
        switch outcome.kind {
        case .applied, .appliedWithoutGeofences:
            let pinsChanged = outcome.pinsChanged || (changes[deviceId]?.pinsChanged ?? false)
            changes[deviceId] = (partition, pinsChanged)
        case .stale, .duplicate, .rejected:
            break  // nothing changed
        }
    }
}
