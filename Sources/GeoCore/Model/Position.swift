/// A device position update, as the positions topic carries it.
public struct Position: Hashable, Sendable {
    public let deviceId: String
    public let coordinate: Coordinate
    /// When the fix was taken, in milliseconds since the Unix epoch.
    public let timestamp: Int64
    /// Horizontal accuracy in metres (radius of 68 % confidence), when reported.
    public let accuracy: Double?
    /// Metres per second, when reported.
    public let speed: Double?
    /// Degrees clockwise from true north, 0..<360, when reported.
    public let heading: Double?
    /// The device user's preferred languages (BCP 47), most preferred first; empty when not reported.
    public let languages: [String]

    public init(
        deviceId: String,
        coordinate: Coordinate,
        timestamp: Int64,
        accuracy: Double? = nil,
        speed: Double? = nil,
        heading: Double? = nil,
        languages: [String] = []
    ) {
        self.deviceId = deviceId
        self.coordinate = coordinate
        self.timestamp = timestamp
        self.accuracy = accuracy
        self.speed = speed
        self.heading = heading
        self.languages = languages
    }
}
