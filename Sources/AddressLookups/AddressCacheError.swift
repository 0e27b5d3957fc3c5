import GRDB

/// A failure of the address cache: what it was doing, and SQLite's result code when SQLite reported it.
///
/// Never fatal to the worker: an address that cannot be cached is still shown, and one that cannot be read is asked
/// of the provider again.
public struct AddressCacheError: Error, Sendable, CustomStringConvertible {
    /// What the cache was doing; extensible.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let open = Code("open")
        public static let read = Code("read")
        public static let write = Code("write")
    }

    public let code: Code
    public let message: String
    /// SQLite's extended result code, when SQLite reported the failure.
    public let sqliteCode: Int32?

    init(_ code: Code, _ error: any Error) {
        self.code = code
        if let error = error as? DatabaseError {
            message = error.message ?? "\(error)"
            sqliteCode = error.extendedResultCode.rawValue
        } else {
            message = "\(error)"
            sqliteCode = nil
        }
    }

    public var description: String {
        let sqlite = sqliteCode.map { " (SQLite \($0))" } ?? ""
        return "address cache \(code) failed\(sqlite): \(message)"
    }
}
