/// The fleet's shared geofences as they stood at each moment: each geofence's versions, each in force from the
/// message time of the catalog record that made it until the next record of the same geofence, with a grid that finds
/// the few near a fix.
///
/// A catalog change applies to positions stamped at or after it, whenever an instance happened to read it: a position
/// asks for the catalog at its own time (``forEach(meeting:at:_:)``), so that the same input gives the same events.
/// The versions no position can still ask for are dropped (``forgetVersions(endedBy:)``) as the positions' times
/// move on.
///
/// A record stamped before the version it replaces (a producer's clock behind) takes over at that version's start:
/// versions follow the catalog's order, and none is in force for a negative stretch.
///
/// Pure, and a value: the loop changes it between the apply threads' rounds, which read it.
public struct GeofenceCatalog: Sendable {
    /// When a version is in force, where, and the link to its geofence's version before it: what a lookup reads of
    /// every version it meets, kept apart from the geofence so that rejecting one touches no reference.
    private struct Span {
        let box: CatalogGrid.Box
        /// In force from this message time (epoch milliseconds)...
        let from: Int64
        /// ...until this one (`Int64.max` while it is the current version).
        var until: Int64
        /// The number of the same geofence's version before this one, while it is kept; -1 when none is.
        var previous: Int32

        var isCurrent: Bool { until == .max }

        func isInForce(at time: Int64) -> Bool { from <= time && time < until }
    }

    /// Everything behind one reference, copied on the first change of a shared copy: the tracker reads the catalog
    /// at every fix, and a value of a dozen collections costs a dozen retains each time it is passed on.
    private final class Storage: @unchecked Sendable {
        // @unchecked: changed only through a uniquely referenced copy (`ownStorage()` below).
        /// Each version's geofence by its number; nil where a forgotten version's number waits to be used again.
        var geofences: [CatalogGeofence?] = []
        /// Each version's span by its number (meaningless where `geofences` has nil).
        var spans: [Span] = []
        var freeNumbers: [Int32] = []
        /// Each geofence's latest version kept: its current one, or the last before its tombstone.
        ///
        /// One map for both, and a link from each version to the one before it, rather than a list per geofence:
        /// nearly every geofence has one version, and a million lists cost more than the geofences' boxes.
        var latest: [String: Int32] = [:]
        /// One copy of each set of tags: a fleet's geofences share a few, and a million arrays of one tag each cost
        /// more than the tags.
        var tagSets: Set<[String]> = []
        var count = 0
        /// The versions that have ended, oldest end first as far as the catalog's order goes.
        var ended: [Int32] = []
        var grid = CatalogGrid()
        var longestApproachSeconds = 0
        var generation: UInt64 = 0

        init() {}

        func copy() -> Storage {
            let copy = Storage()
            copy.geofences = geofences
            copy.spans = spans
            copy.freeNumbers = freeNumbers
            copy.latest = latest
            copy.tagSets = tagSets
            copy.count = count
            copy.ended = ended
            copy.grid = grid
            copy.longestApproachSeconds = longestApproachSeconds
            copy.generation = generation
            return copy
        }
    }

    private var shared = Storage()

    /// The storage, to change: this value's own (copied first when another value shares it).
    private mutating func ownStorage() -> Storage {
        if !isKnownUniquelyReferenced(&shared) { shared = shared.copy() }
        return shared
    }

    /// How many geofences have a current version.
    public var count: Int { shared.count }

    public init() {}

    /// The longest approach horizon any geofence has had, in seconds: how far ahead of a moving device an approach
    /// may be looked for.
    public var longestApproachSeconds: Int { shared.longestApproachSeconds }

    /// How many versions have ended (replaced or deleted) and are kept for positions stamped before their end.
    public var endedVersionCount: Int { shared.ended.count }

    /// Changes with every change of the catalog (a put, a delete, versions dropped): what a device's ``CatalogArea``
    /// was made from, and whether it still stands.
    public var generation: UInt64 { shared.generation }

    /// How many versions it keeps, the current ones and those positions may still ask for.
    public var versionCount: Int { shared.geofences.count - shared.freeNumbers.count }

    /// The current version of geofence `id`.
    public subscript(id: String) -> CatalogGeofence? {
        guard let number = shared.latest[id], shared.spans[Int(number)].isCurrent else { return nil }
        return shared.geofences[Int(number)]
    }

    /// A catalog record of `geofence` stamped `time`: the new version is in force from then on.
    public mutating func put(_ geofence: CatalogGeofence, at time: Int64) {
        let storage = ownStorage()
        let geofence = geofence.sharing(storage.tagSets.insert(geofence.tags).memberAfterInsert)
        let start = end(geofence.id, at: time, in: storage)
        let span = Span(box: geofence.box, from: start, until: .max, previous: storage.latest[geofence.id] ?? -1)
        let number: Int32
        if let free = storage.freeNumbers.popLast() {
            number = free
            storage.geofences[Int(free)] = geofence
            storage.spans[Int(free)] = span
        } else {
            number = Int32(storage.geofences.count)
            storage.geofences.append(geofence)
            storage.spans.append(span)
        }
        storage.latest[geofence.id] = number
        storage.count += 1
        storage.longestApproachSeconds = max(storage.longestApproachSeconds, geofence.geofence.approachSeconds ?? 0)
        storage.grid.insert(number, box: span.box)
        storage.generation &+= 1
    }

    /// A tombstone of geofence `id` stamped `time`: it is in force no more from then on.
    public mutating func delete(id: String, at time: Int64) {
        let storage = ownStorage()
        _ = end(id, at: time, in: storage)
        storage.generation &+= 1
    }

    /// Geofence `id` as it was at message time `time`, with the time its version came in force; nil when none was.
    public func geofence(_ id: String, at time: Int64) -> (geofence: CatalogGeofence, since: Int64)? {
        version(id, at: time).map { (self.geofence(number: $0.number), $0.since) }
    }

    /// The version in force at message time `time` of geofence `id`: its number and when it came in force.
    func version(_ id: String, at time: Int64) -> (number: Int32, since: Int64)? {
        var number = shared.latest[id] ?? -1
        while number >= 0, shared.geofences[Int(number)] != nil {
            let span = shared.spans[Int(number)]
            if span.from <= time { return time < span.until ? (number, span.from) : nil }
            number = span.previous
        }
        return nil
    }

    /// Version `number`'s geofence (a number a lookup gave, at this ``generation``).
    func geofence(number: Int32) -> CatalogGeofence { shared.geofences[Int(number)]! }

    /// Version `number`'s geofence id, without copying the rest of it.
    func id(number: Int32) -> String { shared.geofences[Int(number)]!.geofence.id }

    /// Version `number`'s tags, without copying the rest of it.
    func tags(number: Int32) -> [String] { shared.geofences[Int(number)]!.tags }

    /// Calls `visit` with each geofence in force at message time `time` whose box meets `box`, each once, with the
    /// time its version came in force.
    ///
    /// A box across the antimeridian (west < -180 or east > 180) is looked up on both sides.
    public func forEach(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        _ visit: (CatalogGeofence, _ since: Int64) -> Void
    ) {
        let storage = shared
        forEachNumber(meeting: box) { number in
            let span = storage.spans[Int(number)]
            guard span.isInForce(at: time), let geofence = storage.geofences[Int(number)] else { return }
            visit(geofence, span.from)
        }
    }

    /// Calls `visit` with the number of each version in force at message time `time` whose box meets `box`, each once,
    /// with the time it came in force.
    func forEachVersion(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        _ visit: (_ number: Int32, _ since: Int64) -> Void
    ) {
        let storage = shared
        forEachNumber(meeting: box) { number in
            let span = storage.spans[Int(number)]
            guard span.isInForce(at: time), storage.geofences[Int(number)] != nil else { return }
            visit(number, span.from)
        }
    }

    /// What a device's ``CatalogArea`` keeps (valid while ``generation`` stays as it was): the versions in force at
    /// `time` whose box meets `box` and that `reaches` accepts, in the order of their geofences' ids, and the stretch
    /// of message time around `time` in which none of the versions whose box meets it comes in force or ends, so that
    /// every fix within it has the same versions in force there.
    func area(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        reaching reaches: (_ number: Int32) -> Bool
    ) -> (entries: [CatalogArea.Entry], from: Int64, until: Int64) {
        var entries: [CatalogArea.Entry] = []
        var (from, until) = (Int64.min, Int64.max)
        let storage = shared
        forEachNumber(meeting: box) { number in
            let span = storage.spans[Int(number)]
            func bound(by boundary: Int64) {
                if boundary <= time { from = max(from, boundary) } else { until = min(until, boundary) }
            }
            bound(by: span.from)
            bound(by: span.until)
            if span.isInForce(at: time) && reaches(number) {
                entries.append(CatalogArea.Entry(span.box, number: number, from: span.from))
            }
        }
        entries.sort { id(number: $0.number) < id(number: $1.number) }
        return (entries, from, until)
    }

    /// Each version number whose box meets `box`, once (a version on both sides of the antimeridian is found on its
    /// main side).
    private func forEachNumber(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        _ visit: (Int32) -> Void
    ) {
        guard max(-90, box.south) <= min(90, box.north), box.west <= box.east else { return }
        let (main, wrapped) = CatalogGrid.Box.sides(of: box)
        let storage = shared
        storage.grid.forEach(meeting: main, visit)
        guard let wrapped else { return }
        storage.grid.forEach(meeting: wrapped) { number in
            let box = storage.spans[Int(number)].box
            guard storage.geofences[Int(number)] != nil,
                !(box.west <= -180 && box.east >= 180)  // found on the main side already
            else { return }
            visit(number)
        }
    }

    /// Drops the versions that ended at or before message time `time`, which no position stamped `time` or later
    /// asks for.
    ///
    /// - Returns: how many were dropped.
    @discardableResult
    public mutating func forgetVersions(endedBy time: Int64) -> Int {
        guard shared.ended.contains(where: { shared.spans[Int($0)].until <= time }) else { return 0 }
        let storage = ownStorage()
        var kept: [Int32] = []
        var dropped = 0
        for number in storage.ended {
            guard let geofence = storage.geofences[Int(number)] else { continue }
            let span = storage.spans[Int(number)]
            if span.until <= time {
                storage.grid.remove(number, box: span.box)
                unlink(number, of: geofence.id, in: storage)
                storage.geofences[Int(number)] = nil
                storage.freeNumbers.append(number)
                dropped += 1
            } else {
                kept.append(number)
            }
        }
        storage.ended = kept
        if dropped > 0 { storage.generation &+= 1 }
        return dropped
    }

    /// Takes a forgotten version out of its geofence's chain: versions are forgotten oldest first, so it is the
    /// chain's last; a geofence with none left is forgotten.
    private func unlink(_ number: Int32, of id: String, in storage: Storage) {
        guard var next = storage.latest[id] else { return }
        if next == number {
            storage.latest[id] = nil
            return
        }
        while storage.geofences[Int(next)] != nil, storage.spans[Int(next)].previous >= 0 {
            if storage.spans[Int(next)].previous == number {
                storage.spans[Int(next)].previous = -1
                return
            }
            next = storage.spans[Int(next)].previous
        }
    }

    /// Ends the current version of `id` at `time` (or at its own start, when that is later); returns when the next
    /// version may start.
    private func end(_ id: String, at time: Int64, in storage: Storage) -> Int64 {
        guard let number = storage.latest[id], storage.geofences[Int(number)] != nil,
            storage.spans[Int(number)].isCurrent
        else { return time }
        let end = max(time, storage.spans[Int(number)].from)
        storage.spans[Int(number)].until = end
        storage.ended.append(number)
        storage.count -= 1
        return end
    }
}
