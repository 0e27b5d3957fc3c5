/// A device arriving in another time zone: each side with its offset from UTC at the fix's time, so that a
/// consumer can tell a change of clock from a change of name.
public struct TimeZoneChange: Hashable, Sendable {
    /// An IANA time zone and its offset from UTC (seconds, daylight saving time included) at the change.
    public struct Zone: Hashable, Sendable {
        public let identifier: String
        public let utcOffsetSeconds: Int?

        public init(identifier: String, utcOffsetSeconds: Int?) {
            self.identifier = identifier
            self.utcOffsetSeconds = utcOffsetSeconds
        }
    }

    /// The zone last announced, nil for the first.
    public let from: Zone?
    public let to: Zone
    public let position: Fix

    public init(from: Zone?, to: Zone, position: Fix) {
        self.from = from
        self.to = to
        self.position = position
    }
}
