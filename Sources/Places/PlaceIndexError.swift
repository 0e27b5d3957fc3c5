/// Places sources that cannot be built into an index (reading one fails with an `IndexFileError`).
public struct PlaceIndexError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
