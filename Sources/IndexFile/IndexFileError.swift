/// An index file that cannot be read: which file, where in it, and what is wrong.
///
/// The country and places indexes report every damage this way, so an operator learns which file to rebuild and a
/// reader of the format where the damage starts.
public struct IndexFileError: Error, Sendable, CustomStringConvertible {
    /// The file's path, or what it is when it has none of its own (the bundled country index).
    public let file: String
    /// The byte of the file where the damage was found; nil when the file could not be read at all.
    public let offset: Int?
    /// What is wrong, in words.
    public let problem: String

    public init(file: String, offset: Int?, problem: String) {
        self.file = file
        self.offset = offset
        self.problem = problem
    }

    public var description: String {
        guard let offset else { return "\(file): \(problem)" }
        return "\(file), at byte \(offset): \(problem)"
    }
}
