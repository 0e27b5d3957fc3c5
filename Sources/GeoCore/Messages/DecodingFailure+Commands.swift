public import JSONCodec

extension DecodingFailure.Reason {
    /// A command whose `type` geoworker does not know.
    public static let unknownCommand = Self(rawValue: "unknown-command")
}
