/// The states of all devices a worker holds, and which of them changed since the last checkpoint.
///
/// Still pure: it applies messages through the ``DeviceTracker`` and remembers what it must persist;
/// the caller persists ``takeChanges(_:)`` together with the input offsets, in one transaction.
public struct DeviceRegistry: Sendable {
    public let tracker: DeviceTracker
    /// Where each device's state is in `slots`: one hash lookup per message, the rest is array indexing.
    private var index: DeviceIndex
    private var slots: [Slot]
    /// Each input partition's devices by their silence deadlines (``DeviceTracker/silenceDeadline(of:)``), at the
    /// partition's number: looked at before every message.
    private var silenceQueues: [SilenceQueue] = []
    /// Slots changed since the last ``takeChanges(_:)`` of every change, in the order they first changed; a slot
    /// logged since by a take of the eventful changes only is in it with `changed` false, and maybe again later.
    private var changedSlots: [Int] = []
    /// Slots with an eventful change (``Changes/eventful``) since the last take, in the order they had it.
    private var eventfulSlots: [Int] = []
    /// Where each device's last fix is, by slot: the nearby query's index and the map's for small views.
    ///
    /// Brought up to date by ``updateLastFixes()`` before a query rather than at every fix: a device moves many
    /// times between two questions, and moving it in the grid cost as much as the rest of its fix.
    private var lastFixes = NearbyGrid()
    /// The slots whose last fix changed since the grid was last brought up to date, each once (`isMoved`).
    private var movedSlots: [Int32] = []
    private var isMoved: [Bool] = []

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
        /// Changed since it was last taken.
        var changed = false
        /// Among its changes since it was last taken, one that sent an event or applied a command.
        var eventful = false
        /// Whether a position of the device was applied since the registry got it: a device it was built
        /// with (restored from the store or the changelog) is only as current as its last fix elsewhere.
        var confirmedByFix = false
        /// Where the device's country, region and time zone were last looked up with room around them: not stored,
        /// like the slot.
        var areas = DeviceAreas()
        /// What the nearby query needs to give the device's speed: not stored (none until this registry applies a
        /// fix of it).
        var motion = Motion()
        /// Whether the device has an entry in its partition's ``SilenceQueue``.
        var silenceQueued = false
    }

    public init(tracker: DeviceTracker, states: [DeviceState] = []) {
        self.tracker = tracker
        self.slots = []
        self.index = DeviceIndex(minimumCapacity: states.count)
        slots.reserveCapacity(states.count)
        for state in states {
            let slot = slot(of: state.deviceId)
            slots[slot].state = state
            pinCount += state.pins.count
            if let fix = state.lastFix { lastFixes.place(slot, at: fix.coordinate) }
            queueSilence(slot)
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

    /// Where one device's last fix is, if the registry holds the device and it has one: its state's, without a copy of
    /// the state.
    public func lastFixCoordinate(of deviceId: String) -> Coordinate? {
        index.slot(of: deviceId, hash: index.hashing.hash(deviceId)) { slots[$0].state.deviceId }.flatMap {
            slots[$0].state.lastFix?.coordinate
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

    /// Applies a position to its device, appending the events it causes to `events`; `streamTime` is its pair's stream
    /// time before it, in a worker (``DeviceTracker/apply(_:origin:streamTime:to:areas:events:)``).
    public mutating func apply(
        _ position: Position,
        origin: MessageOrigin,
        streamTime: Int64? = nil,
        events: inout [DeviceEvent]
    ) -> Outcome {
        let slot = slot(of: position.deviceId)
        if slots[slot].state.reflects(origin, kind: .positions) { return .alreadyApplied }
        let previous = slots[slot].state.lastFix
        // Taken out and put back: two in-place accesses to one slot at once would overlap.
        var areas = slots[slot].areas
        let eventsBefore = events.count
        let outcome = tracker.apply(
            position,
            origin: origin,
            streamTime: streamTime,
            to: &slots[slot].state,
            areas: &areas,
            events: &events
        )
        slots[slot].areas = areas
        record(outcome, slot: slot, origin: origin, kind: .positions, isEventful: events.count > eventsBefore)
        switch outcome.kind {
        case .applied, .appliedWithoutGeofences:
            slots[slot].confirmedByFix = true
            slots[slot].motion = Motion(reportedSpeed: position.speed, previous: previous)
            if !isMoved[slot] {
                isMoved[slot] = true
                movedSlots.append(Int32(slot))
            }
        case .stale, .duplicate, .rejected: break
        }
        queueSilence(slot)
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
        record(outcome, slot: slot, origin: origin, kind: .commands, isEventful: true)
        queueSilence(slot)
        return .tracked(outcome.kind)
    }

    /// Whether a device of input partition `partition` has a silence deadline at or before `streamTime`: what
    /// ``announceSilences(inPartition:upTo:events:)`` would look for, asked cheaply.
    @inline(__always)
    public func hasSilenceDue(inPartition partition: Int32, at streamTime: Int64) -> Bool {
        partition >= 0 && Int(partition) < silenceQueues.count
            && silenceQueues[Int(partition)].earliest.map { $0 <= streamTime } == true
    }

    /// Announces `device.silent` for each device of input partition `partition` whose silence deadline is at or
    /// before `streamTime`, the newest message time the partition has applied.
    ///
    /// The events are appended to `events`; the devices count as changed, with an event. Returns how many.
    public mutating func announceSilences(
        inPartition partition: Int32,
        upTo streamTime: Int64,
        events: inout [DeviceEvent]
    ) -> Int {
        var announced = 0
        while hasSilenceDue(inPartition: partition, at: streamTime),
            let (_, queued) = silenceQueues[Int(partition)].pop()
        {
            let slot = Int(queued)
            slots[slot].silenceQueued = false
            guard slots[slot].state.inputPartition == partition else {
                queueSilence(slot)  // its messages come on another partition now
                continue
            }
            guard let event = tracker.silence(of: &slots[slot].state, at: streamTime) else {
                queueSilence(slot)  // a fix moved its deadline on since it was queued
                continue
            }
            events.append(event)
            announced += 1
            markChanged(slot, eventful: true)
        }
        return announced
    }

    /// Puts the device into its partition's silence queue when it has a deadline and no entry yet.
    private mutating func queueSilence(_ slot: Int) {
        guard !slots[slot].silenceQueued, slots[slot].state.inputPartition >= 0,
            let deadline = tracker.silenceDeadline(of: slots[slot].state)
        else { return }
        slots[slot].silenceQueued = true
        let partition = Int(slots[slot].state.inputPartition)
        if partition >= silenceQueues.count {
            silenceQueues += Array(repeating: SilenceQueue(), count: partition + 1 - silenceQueues.count)
        }
        silenceQueues[partition].push(deadline, slot: Int32(slot))
    }

    /// Which changed devices a take hands out.
    public enum Changes: Sendable {
        /// Every device changed since it was last taken.
        case all
        /// The devices with an eventful change since they were last taken: one that sent an event or applied a
        /// command. A device whose changes only moved its last fix stays changed, for a later take of all.
        ///
        /// What a worker logs often: a replay from an older offset applies such a device's fixes again to the state
        /// it had, and so sends nothing, while an eventful change replayed would send its events again.
        case eventful
    }

    /// The devices changed since they were last taken, `which` of them, and forgets them: copies, which share their
    /// storage with the registry's until it changes them again. (The worker's checkpoint thread encodes them; the
    /// store orders what it writes itself.)
    public mutating func takeChanges(_ which: Changes = .all) -> [DeviceState] {
        var changes: [DeviceState] = []
        let taken = which == .all ? changedSlots : eventfulSlots
        changes.reserveCapacity(taken.count)
        slots.withUnsafeMutableBufferPointer { slots in
            // Read where it lies: reading `slots[slot].state` through the array copied the whole slot first,
            // retaining and releasing every reference of the state twice.
            for slot in taken where slots[slot].changed {
                changes.append(slots[slot].state)
                slots[slot].changed = false
                slots[slot].eventful = false
            }
        }
        eventfulSlots.removeAll(keepingCapacity: true)
        if which == .all { changedSlots.removeAll(keepingCapacity: true) }
        return changes
    }

    private mutating func slot(of deviceId: String) -> Int {
        let hash = index.hashing.hash(deviceId)
        if let slot = index.slot(of: deviceId, hash: hash, idOfSlot: { slots[$0].state.deviceId }) { return slot }
        let slot = slots.count
        slots.append(Slot(state: DeviceState(deviceId: deviceId)))
        isMoved.append(false)
        // Growing the index rehashes every id; the snapshot shares the slots' storage (nothing mutates it
        // meanwhile), and only the small hashing value is captured, never the table being grown.
        let hashing = index.hashing
        let snapshot = slots
        index.insert(slot: slot, hash: hash) { hashing.hash(snapshot[$0].state.deviceId) }
        return slot
    }

    private mutating func record(
        _ outcome: DeviceTracker.Outcome,
        slot: Int,
        origin: MessageOrigin,
        kind: InputKind,
        isEventful: Bool
    ) {
        switch outcome.kind {
        case .applied, .appliedWithoutGeofences:
            markChanged(slot, eventful: isEventful)
            slots[slot].state.recordApplied(origin, kind: kind)
        case .stale, .duplicate, .rejected:
            break  // nothing changed
        }
    }

    /// Lists the device among the changed ones (and the eventful ones when `eventful`) once, until they are taken.
    private mutating func markChanged(_ slot: Int, eventful: Bool) {
        if !slots[slot].changed {
            slots[slot].changed = true
            changedSlots.append(slot)
        }
        if eventful && !slots[slot].eventful {
            slots[slot].eventful = true
            eventfulSlots.append(slot)
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

extension DeviceRegistry {
    /// A device near a point: its state, how far its last fix is, and its speed there if known.
    public struct NearbyDevice: Sendable {
        public let state: DeviceState
        public let distance: Double
        public let speed: Double?
        /// Whether a fix confirmed it since the registry got it (the card's `current`).
        public let confirmedByFix: Bool
    }

    /// Moves the devices whose last fix changed since the last call to where they are now in the grid of last
    /// fixes: before ``nearby(to:within:limit:)`` or ``forEachState(inView:_:)``, which require it.
    public mutating func updateLastFixes() {
        for slot in movedSlots {
            if let fix = slots[Int(slot)].state.lastFix { lastFixes.place(Int(slot), at: fix.coordinate) }
            isMoved[Int(slot)] = false
        }
        movedSlots.removeAll(keepingCapacity: true)
    }

    /// The devices whose last fix lies within `radius` metres of `center`, nearest first, at most `limit`.
    ///
    /// From the grid of last fixes, unless the circle covers more cells than the registry has devices: then every
    /// device is measured, which is cheaper.
    public func nearby(to center: Coordinate, within radius: Double, limit: Int) -> [NearbyDevice] {
        precondition(movedSlots.isEmpty, "updateLastFixes() before asking the grid")
        let found: [(id: Int, distance: Double)]
        let cellSpan = 2 * radius / LocalPlane.metresPerDegree / lastFixes.cellDegrees + 2
        if cellSpan * cellSpan > Double(slots.count) {
            found = slots.indices.compactMap { slot in
                guard let fix = slots[slot].state.lastFix else { return nil }
                let distance = center.distance(to: fix.coordinate)
                return distance <= radius ? (slot, distance) : nil
            }.sorted { $0.distance < $1.distance }.prefix(limit).map { $0 }
        } else {
            found = lastFixes.nearest(to: center, within: radius, limit: limit)
        }
        return found.map {
            NearbyDevice(
                state: slots[$0.id].state,
                distance: $0.distance,
                speed: speed(of: slots[$0.id]),
                confirmedByFix: slots[$0.id].confirmedByFix
            )
        }
    }

    /// Calls `body` with every device whose last fix is in `view`, and whether a fix confirmed it since the registry
    /// got it: from the grid of last fixes for a view of fewer cells than the registry has devices, else by looking
    /// at every device.
    public func forEachState(inView view: MapView, _ body: (DeviceState, Bool) -> Void) {
        precondition(movedSlots.isEmpty, "updateLastFixes() before asking the grid")
        let width = view.west <= view.east ? view.east - view.west : 360 - view.west + view.east
        let cells = (width / lastFixes.cellDegrees + 2) * ((view.north - view.south) / lastFixes.cellDegrees + 2)
        guard cells <= Double(slots.count) else {
            for slot in slots {
                if let fix = slot.state.lastFix, view.contains(fix.coordinate) { body(slot.state, slot.confirmedByFix) }
            }
            return
        }
        for slot in lastFixes.inside(south: view.south, west: view.west, north: view.north, east: view.east) {
            body(slots[slot].state, slots[slot].confirmedByFix)
        }
    }

    /// A device's speed at its last fix: as reported, else between its last two fixes when they are close enough
    /// in time to say something (``TrackerConfiguration/maxFixGapSeconds``).
    private func speed(of slot: Slot) -> Double? {
        let motion = slot.motion
        if !motion.reportedSpeed.isNaN { return Double(motion.reportedSpeed) }
        guard motion.previousTimestamp != .min, let last = slot.state.lastFix,
            let previous = Coordinate(
                latitude: Double(motion.previousLatitude),
                longitude: Double(motion.previousLongitude)
            )
        else { return nil }
        let seconds = Double(last.timestamp - motion.previousTimestamp) / 1000
        guard seconds > 0, seconds <= Double(tracker.configuration.maxFixGapSeconds) else { return nil }
        return previous.distance(to: last.coordinate) / seconds
    }

    /// A device's reported speed and the fix before its last, in 20 bytes beside its state (single precision: under
    /// a metre off, which a speed over seconds does not see).
    struct Motion {
        var reportedSpeed = Float.nan
        var previousLatitude: Float = 0
        var previousLongitude: Float = 0
        var previousTimestamp = Int64.min

        init() {}

        init(reportedSpeed: Double?, previous: Fix?) {
            self.reportedSpeed = reportedSpeed.map(Float.init) ?? .nan
            if let previous {
                previousLatitude = Float(previous.coordinate.latitude)
                previousLongitude = Float(previous.coordinate.longitude)
                previousTimestamp = previous.timestamp
            }
        }
    }
}
