/// Bytes that are not a ``DeviceState`` as ``DeviceStateEncoding`` writes it, and why.
public struct DeviceStateDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
