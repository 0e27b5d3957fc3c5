/// The states of all devices a worker holds, and which of them changed since the last checkpoint.
///
/// Still pure: it applies messages through the ``DeviceTracker`` and remembers what it must persist;
/// the caller persists ``takeChanges()`` together with the input offsets, in one transaction.
public struct DeviceRegistry: Sendable {
    public let tracker: DeviceTracker
    /// Where each device's state is in `slots`: one hash lookup per message, the rest is array indexing.
    private var index: DeviceIndex
    private var slots: [Slot]
    /// Slots changed since the last ``takeChanges()``, in the order they first changed.
    private var changedSlots: [Int] = []

    /// What became of one message given to the registry.
    public enum Outcome: Hashable, Sendable {
        /// The device's state already reflects the message (``DeviceState/appliedOffsets``), met again on a
        /// replay: skipped, never given to the tracker.
        case alreadyApplied
        /// Given to the tracker, which says what became of it.
        case tracked(DeviceTracker.Outcome.Kind)
    }

    private struct Slot {
        var state: DeviceState
        var changed = false
        /// Whether a position of the device was applied since the registry got it: a device it was built
        /// with (restored from the store or the changelog) is only as current as its last fix elsewhere.
        var confirmedByFix = false
        /// Where the device's country was last looked up with room around it: not stored, like the slot.
        var countryArea = CountryArea.none
    }

    public init(tracker: DeviceTracker, states: [DeviceState] = []) {
        self.tracker = tracker
        self.slots = []
        self.index = DeviceIndex(minimumCapacity: states.count)
        slots.reserveCapacity(states.count)
        for state in states {
            slots[slot(of: state.deviceId)].state = state
            pinCount += state.pins.count
        }
    }

    /// How many devices the registry holds.
    public var count: Int { slots.count }

    /// How many tracked pins the registry's devices hold in all (kept up to date by commands, the only
    /// thing that changes pins).
    public private(set) var pinCount = 0

    /// Every device's state, by device id.
    public var states: [String: DeviceState] {
        Dictionary(uniqueKeysWithValues: slots.map { ($0.state.deviceId, $0.state) })
    }

    /// The state of one device, if the registry holds it.
    public func state(of deviceId: String) -> DeviceState? {
        index.slot(of: deviceId, hash: index.hashing.hash(deviceId)) { slots[$0].state.deviceId }.map {
            slots[$0].state
        }
    }

    /// The operator's status card of one device, if the registry holds it, asked for at `now` (milliseconds since
    /// the epoch: the moment of the device's local time on the card).
    public func statusCard(of deviceId: String, now: Int64) -> DeviceStatusCard? {
        index.slot(of: deviceId, hash: index.hashing.hash(deviceId)) { slots[$0].state.deviceId }.map {
            DeviceStatusCard(
                state: slots[$0].state,
                confirmedByFix: slots[$0].confirmedByFix,
                tracker: tracker,
                now: now
            )
        }
    }

    /// Calls `body` with every device's state and whether a fix confirmed it since the registry got it.
    public func forEachState(_ body: (DeviceState, Bool) -> Void) {
        for slot in slots { body(slot.state, slot.confirmedByFix) }
    }

    /// Applies a position to its device, appending the events it causes to `events`.
    public mutating func apply(
        _ position: Position,
        origin: MessageOrigin,
        events: inout [DeviceEvent]
    ) -> Outcome {
        let slot = slot(of: position.deviceId)
        if slots[slot].state.reflects(origin, kind: .positions) { return .alreadyApplied }
        // Taken out and put back: two in-place accesses to one slot at once would overlap.
        var area = slots[slot].countryArea
        let outcome = tracker.apply(
            position,
            origin: origin,
            to: &slots[slot].state,
            countryArea: &area,
            events: &events
        )
        slots[slot].countryArea = area
        record(outcome, slot: slot, origin: origin, kind: .positions)
        switch outcome.kind {
        case .applied, .appliedWithoutGeofences: slots[slot].confirmedByFix = true
        case .stale, .duplicate, .rejected: break
        }
        return .tracked(outcome.kind)
    }

    /// Applies a command to its device, appending the events it causes to `events`.
    public mutating func apply(
        _ command: DeviceCommand,
        origin: MessageOrigin,
        events: inout [DeviceEvent]
    ) -> Outcome {
        let slot = slot(of: command.deviceId)
        if slots[slot].state.reflects(origin, kind: .commands) { return .alreadyApplied }
        let pinsBefore = slots[slot].state.pins.count
        let outcome = tracker.apply(command, origin: origin, to: &slots[slot].state, events: &events)
        pinCount += slots[slot].state.pins.count - pinsBefore
        record(outcome, slot: slot, origin: origin, kind: .commands)
        return .tracked(outcome.kind)
    }

    /// The devices changed since the last call, in the order they first changed, and forgets them. (The worker
    /// takes them encoded, ``takeEncodedChanges()``; the store orders what it writes itself.)
    public mutating func takeChanges() -> [DeviceState] {
        takeChanges { copy $0 }
    }

    /// The devices changed since the last call, each encoded as the store and the changelog keep it
    /// (``DeviceStateEncoding``), in the order they first changed, and forgets them.
    ///
    /// Encoded where they lie: no state is copied.
    public mutating func takeEncodedChanges() -> [EncodedDevice] {
        takeChanges { state in
            EncodedDevice(
                deviceId: state.deviceId,
                partition: state.inputPartition,
                bytes: DeviceStateEncoding.encode(state)
            )
        }
    }

    /// What `take` makes of each device changed since the last call, in the order they first changed; forgets
    /// the changes.
    private mutating func takeChanges<Change>(_ take: (borrowing DeviceState) -> Change) -> [Change] {
        var changes: [Change] = []
        changes.reserveCapacity(changedSlots.count)
        slots.withUnsafeMutableBufferPointer { slots in
            for slot in changedSlots {
                // Read where it lies: reading `slots[slot].state` through the array copied the whole slot
                // first, retaining and releasing every reference of the state twice.
                changes.append(take(slots[slot].state))
                slots[slot].changed = false
            }
        }
        changedSlots.removeAll(keepingCapacity: true)
        return changes
    }

    private mutating func slot(of deviceId: String) -> Int {
        let hash = index.hashing.hash(deviceId)
        if let slot = index.slot(of: deviceId, hash: hash, idOfSlot: { slots[$0].state.deviceId }) { return slot }
        let slot = slots.count
        slots.append(Slot(state: DeviceState(deviceId: deviceId)))
        // Growing the index rehashes every id; the snapshot shares the slots' storage (nothing mutates it
        // meanwhile), and only the small hashing value is captured, never the table being grown.
        let hashing = index.hashing
        let snapshot = slots
        index.insert(slot: slot, hash: hash) { hashing.hash(snapshot[$0].state.deviceId) }
        return slot
    }

    private mutating func record(_ outcome: DeviceTracker.Outcome, slot: Int, origin: MessageOrigin, kind: InputKind) {
        switch outcome.kind {
        case .applied, .appliedWithoutGeofences:
            if !slots[slot].changed {
                slots[slot].changed = true
                changedSlots.append(slot)
            }
            slots[slot].state.recordApplied(origin, kind: kind)
        case .stale, .duplicate, .rejected:
            break  // nothing changed
        }
    }
}

extension DeviceState {
    /// Whether the state already reflects this message: it comes from the device's input partition at or below the last
    /// offset applied from that topic.
    ///
    /// Offsets only grow within a partition, so such a message is a replay (after a crash, or of input another instance
    /// applied before this one restored the device from the changelog).
    func reflects(_ origin: MessageOrigin, kind: InputKind) -> Bool {
        origin.partition == inputPartition && origin.offset <= appliedOffsets[kind]
    }

    /// Notes a message as applied.
    ///
    /// Offsets are only comparable within one partition: a device whose messages move to another partition (its key
    /// changed, or the topics were repartitioned) starts counting afresh.
    mutating func recordApplied(_ origin: MessageOrigin, kind: InputKind) {
        if origin.partition != inputPartition {
            inputPartition = origin.partition
            appliedOffsets = AppliedOffsets()
        }
        appliedOffsets[kind] = origin.offset
    }
}
