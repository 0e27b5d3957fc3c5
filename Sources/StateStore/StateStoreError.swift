import GRDB

/// A failure of the state store: what it was doing, SQLite's own result code, and whether trying again
/// later may succeed (the database was busy) or not (corrupt file, full disk, no permission).
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    /// What the store was doing; extensible.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let open = Code("open")
        public static let migrate = Code("migrate")
        public static let read = Code("read")
        public static let write = Code("write")
        /// Another process holds the state directory (``StateDirectoryLock``).
        public static let lock = Code("lock")
    }

    public let code: Code
    public let message: String
    /// SQLite's extended result code, when SQLite reported the failure.
    public let sqliteCode: Int32?

    /// SQLITE_BUSY and SQLITE_LOCKED pass once the other connection is done.
    public var isRetriable: Bool {
        guard let sqliteCode else { return false }
        return sqliteCode & 0xFF == 5 || sqliteCode & 0xFF == 6
    }

    /// The disk failed the write rather than the data: SQLITE_FULL (no space left) or SQLITE_IOERR.
    ///
    /// Nothing of the transaction was written, and the same write may succeed once space returns or the disk
    /// recovers.
    public var isStorageFailure: Bool {
        guard let sqliteCode else { return false }
        return sqliteCode & 0xFF == 13 || sqliteCode & 0xFF == 10
    }

    public init(code: Code, message: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.sqliteCode = sqliteCode
    }

    public var description: String {
        let sqlite = sqliteCode.map { " (SQLite \($0))" } ?? ""
        return "state store \(code) failed\(sqlite): \(message)"
    }

    init(_ code: Code, _ error: any Error) {
        if let databaseError = error as? DatabaseError {
            self.init(
                code: code,
                message: databaseError.message ?? "\(databaseError)",
                sqliteCode: databaseError.extendedResultCode.rawValue
            )
        } else {
            self.init(code: code, message: "\(error)")
        }
    }
}
