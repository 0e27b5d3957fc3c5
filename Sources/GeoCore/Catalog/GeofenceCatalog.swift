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
    private struct Version: Sendable {
        let geofence: CatalogGeofence
        let box: CatalogGrid.Box
        /// In force from this message time (epoch milliseconds)...
        let from: Int64
        /// ...until this one (`Int64.max` while it is the current version).
        var until: Int64
        /// The number of the same geofence's version before this one, while it is kept; -1 when none is.
        var previous: Int32

        var isCurrent: Bool { until == .max }
    }

    /// Each version by its number; nil where a forgotten version's number waits to be used again.
    private var versions: [Version?] = []
    private var freeNumbers: [Int32] = []
    /// Each geofence's latest version kept: its current one, or the last before its tombstone.
    ///
    /// One map for both, and a link from each version to the one before it, rather than a list per geofence: nearly
    /// every geofence has one version, and a million lists cost more than the geofences' boxes.
    private var latest: [String: Int32] = [:]
    /// One copy of each set of tags: a fleet's geofences share a few, and a million arrays of one tag each cost more
    /// than the tags.
    private var tagSets: Set<[String]> = []
    /// How many geofences have a current version.
    public private(set) var count = 0
    /// The versions that have ended, oldest end first as far as the catalog's order goes.
    private var ended: [Int32] = []
    private var grid = CatalogGrid()

    public init() {}

    /// The longest approach horizon any geofence has had, in seconds: how far ahead of a moving device an approach
    /// may be looked for.
    public private(set) var longestApproachSeconds = 0

    /// How many versions have ended (replaced or deleted) and are kept for positions stamped before their end.
    public var endedVersionCount: Int { ended.count }

    /// Changes with every change of the catalog (a put, a delete, versions dropped): what a device's ``CatalogArea``
    /// was made from, and whether it still stands.
    public private(set) var generation: UInt64 = 0

    /// How many versions it keeps, the current ones and those positions may still ask for.
    public var versionCount: Int { versions.count - freeNumbers.count }

    /// The current version of geofence `id`.
    public subscript(id: String) -> CatalogGeofence? {
        guard let number = latest[id], let version = versions[Int(number)], version.isCurrent else { return nil }
        return version.geofence
    }

    /// A catalog record of `geofence` stamped `time`: the new version is in force from then on.
    public mutating func put(_ geofence: CatalogGeofence, at time: Int64) {
        let geofence = geofence.sharing(tagSets.insert(geofence.tags).memberAfterInsert)
        let start = end(geofence.id, at: time)
        let version = Version(
            geofence: geofence,
            box: geofence.box,
            from: start,
            until: .max,
            previous: latest[geofence.id] ?? -1
        )
        let number: Int32
        if let free = freeNumbers.popLast() {
            number = free
            versions[Int(free)] = version
        } else {
            number = Int32(versions.count)
            versions.append(version)
        }
        latest[geofence.id] = number
        count += 1
        longestApproachSeconds = max(longestApproachSeconds, geofence.geofence.approachSeconds ?? 0)
        grid.insert(number, box: version.box)
        generation &+= 1
    }

    /// A tombstone of geofence `id` stamped `time`: it is in force no more from then on.
    public mutating func delete(id: String, at time: Int64) {
        _ = end(id, at: time)
        generation &+= 1
    }

    /// Geofence `id` as it was at message time `time`, with the time its version came in force; nil when none was.
    public func geofence(_ id: String, at time: Int64) -> (geofence: CatalogGeofence, since: Int64)? {
        var number = latest[id] ?? -1
        while number >= 0, let version = versions[Int(number)] {
            if version.from <= time { return time < version.until ? (version.geofence, version.from) : nil }
            number = version.previous
        }
        return nil
    }

    /// Calls `visit` with each geofence in force at message time `time` whose box meets `box`, each once, with the
    /// time its version came in force.
    ///
    /// A box across the antimeridian (west < -180 or east > 180) is looked up on both sides.
    public func forEach(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        _ visit: (CatalogGeofence, _ since: Int64) -> Void
    ) {
        forEachNumber(meeting: box) { number in
            guard let version = versions[Int(number)], version.from <= time, time < version.until else { return }
            visit(version.geofence, version.from)
        }
    }

    /// The numbers of the versions, of any time, whose box meets `box`, each once: what a device's ``CatalogArea``
    /// keeps, valid while ``generation`` stays as it was.
    func versionNumbers(meeting box: (west: Double, south: Double, east: Double, north: Double)) -> [Int32] {
        var numbers: [Int32] = []
        forEachNumber(meeting: box) { numbers.append($0) }
        return numbers
    }

    /// Calls `visit` with each geofence in force at `time` among the versions `numbers` (taken at this
    /// ``generation``) whose box meets `box`.
    func forEach(
        among numbers: [Int32],
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        _ visit: (CatalogGeofence, _ since: Int64) -> Void
    ) {
        let (main, wrapped) = Self.boxes(box)
        for number in numbers {
            guard let version = versions[Int(number)], version.from <= time, time < version.until,
                version.box.meets(main) || wrapped.map(version.box.meets) == true
            else { continue }
            visit(version.geofence, version.from)
        }
    }

    /// The query box brought into -180...180: the part from its west, and what lies past 180 as a box from -180 on.
    private static func boxes(
        _ box: (west: Double, south: Double, east: Double, north: Double)
    ) -> (main: CatalogGrid.Box, wrapped: CatalogGrid.Box?) {
        let south = max(-90, box.south)
        let north = min(90, box.north)
        var west = box.west
        var east = box.east
        if east - west >= 360 {
            (west, east) = (-180, 180)
        } else {
            let turns = ((west + 180) / 360).rounded(.down) * 360
            (west, east) = (west - turns, east - turns)
        }
        let main = CatalogGrid.Box(west: west, south: south, east: min(180, east), north: north)
        let wrapped = east > 180 ? CatalogGrid.Box(west: -180, south: south, east: east - 360, north: north) : nil
        return (main, wrapped)
    }

    /// Each version number whose box meets `box`, once (a version on both sides of the antimeridian is found on its
    /// main side).
    private func forEachNumber(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        _ visit: (Int32) -> Void
    ) {
        guard max(-90, box.south) <= min(90, box.north), box.west <= box.east else { return }
        let (main, wrapped) = Self.boxes(box)
        grid.forEach(meeting: main, visit)
        guard let wrapped else { return }
        grid.forEach(meeting: wrapped) { number in
            guard let version = versions[Int(number)],
                !(version.box.west <= -180 && version.box.east >= 180)  // found on the main side already
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
        var kept: [Int32] = []
        var dropped = 0
        for number in ended {
            guard let version = versions[Int(number)] else { continue }
            if version.until <= time {
                grid.remove(number, box: version.box)
                unlink(number, of: version.geofence.id)
                versions[Int(number)] = nil
                freeNumbers.append(number)
                dropped += 1
            } else {
                kept.append(number)
            }
        }
        ended = kept
        if dropped > 0 { generation &+= 1 }
        return dropped
    }

    /// Takes a forgotten version out of its geofence's chain: versions are forgotten oldest first, so it is the
    /// chain's last; a geofence with none left is forgotten.
    private mutating func unlink(_ number: Int32, of id: String) {
        guard var next = latest[id] else { return }
        if next == number {
            latest[id] = nil
            return
        }
        while let version = versions[Int(next)], version.previous >= 0 {
            if version.previous == number {
                versions[Int(next)]?.previous = -1
                return
            }
            next = version.previous
        }
    }

    /// Ends the current version of `id` at `time` (or at its own start, when that is later); returns when the next
    /// version may start.
    private mutating func end(_ id: String, at time: Int64) -> Int64 {
        guard let number = latest[id], var version = versions[Int(number)], version.isCurrent else { return time }
        let end = max(time, version.from)
        version.until = end
        versions[Int(number)] = version
        ended.append(number)
        count -= 1
        return end
    }
}
