/// A position as far as state and events need it.
public struct Fix: Hashable, Sendable {
    public let coordinate: Coordinate
    /// Milliseconds since the Unix epoch.
    public let timestamp: Int64
    /// Metres, when reported.
    public let accuracy: Double?

    public init(coordinate: Coordinate, timestamp: Int64, accuracy: Double?) {
        self.coordinate = coordinate
        self.timestamp = timestamp
        self.accuracy = accuracy
    }

    public init(_ position: Position) {
        self.init(coordinate: position.coordinate, timestamp: position.timestamp, accuracy: position.accuracy)
    }
}
