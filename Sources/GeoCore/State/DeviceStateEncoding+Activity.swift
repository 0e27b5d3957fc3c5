/// A device's activity in its state's bytes (version 7; the layout is in ``DeviceStateEncoding``).
extension DeviceStateEncoding {
    enum ActivityFlag {
        static let anchor: UInt16 = 1
        static let trip: UInt16 = 2
        static let speeding: UInt16 = 4
        static let speedLimit: UInt16 = 8
        static let silentAfter: UInt16 = 16
        static let tripAnnounced: UInt16 = 32
        static let speedingAnnounced: UInt16 = 64
        static let speedingHeading: UInt16 = 128
        static let silenceAnnounced: UInt16 = 256
        static let all: UInt16 = 511
    }
}

extension DeviceStateEncoding.Writer {
    mutating func activity(_ activity: DeviceActivity) {
        typealias Flag = DeviceStateEncoding.ActivityFlag
        var flags: UInt16 = 0
        if activity.anchor != nil { flags |= Flag.anchor }
        if let trip = activity.trip { flags |= Flag.trip | (trip.announced ? Flag.tripAnnounced : 0) }
        if let speeding = activity.speeding {
            flags |=
                Flag.speeding | (speeding.announced ? Flag.speedingAnnounced : 0)
                | (speeding.heading != nil ? Flag.speedingHeading : 0)
        }
        if activity.speedLimit != nil { flags |= Flag.speedLimit }
        if activity.silentAfterSeconds != nil { flags |= Flag.silentAfter }
        if activity.silenceAnnounced { flags |= Flag.silenceAnnounced }
        varint(UInt64(flags))
        if let anchor = activity.anchor { fix(anchor) }
        if let trip = activity.trip {
            fix(trip.start)
            fix(trip.lastMove)
            double(trip.distanceMeters)
            double(trip.topSpeed)
        }
        if let speeding = activity.speeding {
            varint(DeviceStateEncoding.zigzag(speeding.since))
            double(speeding.topSpeed)
            if let heading = speeding.heading { double(heading) }
        }
        if let limit = activity.speedLimit { double(limit) }
        if let seconds = activity.silentAfterSeconds { varint(UInt64(max(0, seconds))) }
    }

    mutating func fix(_ fix: Fix) {
        double(fix.coordinate.latitude)
        double(fix.coordinate.longitude)
        varint(DeviceStateEncoding.zigzag(fix.timestamp))
        byte(fix.accuracy == nil ? 0 : 1)
        if let accuracy = fix.accuracy { double(accuracy) }
    }
}

extension DeviceStateEncoding.Reader {
    mutating func activity() throws(DeviceStateDecodingError) -> DeviceActivity {
        typealias Flag = DeviceStateEncoding.ActivityFlag
        let encoded = try varint("activity flags")
        guard let flags = UInt16(exactly: encoded), flags & ~Flag.all == 0,
            flags & Flag.trip != 0 || flags & Flag.tripAnnounced == 0,
            flags & Flag.speeding != 0 || flags & (Flag.speedingAnnounced | Flag.speedingHeading) == 0
        else { throw DeviceStateDecodingError("unknown activity flags \(encoded)") }
        var activity = DeviceActivity(silenceAnnounced: flags & Flag.silenceAnnounced != 0)
        if flags & Flag.anchor != 0 { activity.anchor = try fix("anchor") }
        if flags & Flag.trip != 0 {
            let start = try fix("trip start")
            let lastMove = try fix("trip's last move")
            let distance = try double("trip distance")
            let top = try double("trip top speed")
            guard distance.isFinite, distance >= 0, top.isFinite, top >= 0 else {
                throw DeviceStateDecodingError("the trip's distance \(distance) or top speed \(top) is out of range")
            }
            activity.trip = TripProgress(
                start: start,
                lastMove: lastMove,
                distanceMeters: distance,
                topSpeed: top,
                announced: flags & Flag.tripAnnounced != 0
            )
        }
        if flags & Flag.speeding != 0 {
            let since = DeviceStateEncoding.unzigzag(try varint("speeding since"))
            let top = try double("speeding top speed")
            let heading = flags & Flag.speedingHeading != 0 ? try double("speeding heading") : nil
            guard top.isFinite, top >= 0, heading.map({ $0.isFinite }) ?? true else {
                throw DeviceStateDecodingError("the speeding's top speed \(top) is out of range")
            }
            activity.speeding = SpeedEpisode(
                since: since,
                topSpeed: top,
                announced: flags & Flag.speedingAnnounced != 0,
                heading: heading
            )
        }
        if flags & Flag.speedLimit != 0 {
            let limit = try double("speed limit")
            guard DeviceCommand.speedLimitRange.contains(limit) else {
                throw DeviceStateDecodingError("the speed limit \(limit) is out of range")
            }
            activity.speedLimit = limit
        }
        if flags & Flag.silentAfter != 0 {
            guard let seconds = Int(exactly: try varint("silent after")), DeviceCommand.silenceRange.contains(seconds)
            else { throw DeviceStateDecodingError("the silence threshold is out of range") }
            activity.silentAfterSeconds = seconds
        }
        return activity
    }

    mutating func fix(_ what: String) throws(DeviceStateDecodingError) -> Fix {
        let latitude = try double("\(what) latitude")
        let longitude = try double("\(what) longitude")
        guard let coordinate = Coordinate(latitude: latitude, longitude: longitude) else {
            throw DeviceStateDecodingError("the \(what) (\(latitude), \(longitude)) is not a coordinate")
        }
        let timestamp = DeviceStateEncoding.unzigzag(try varint("\(what) timestamp"))
        let hasAccuracy = try byte("\(what) accuracy flag")
        guard hasAccuracy <= 1 else { throw DeviceStateDecodingError("the \(what) has unknown flags \(hasAccuracy)") }
        let accuracy = hasAccuracy == 1 ? try double("\(what) accuracy") : nil
        if let accuracy, !(accuracy.isFinite && accuracy >= 0) {
            throw DeviceStateDecodingError("the \(what)'s accuracy \(accuracy) is not a distance")
        }
        return Fix(coordinate: coordinate, timestamp: timestamp, accuracy: accuracy)
    }
}
