import GRDB
import GRDBSQLite

/// A prepared statement that takes its values straight through SQLite's C binding calls, for the hot
/// writes of a checkpoint.
///
/// GRDB's `StatementArguments` box every value in an existential and copy it into an array before
/// binding: per row, with tens of thousands of changed devices per checkpoint, that work rivals SQLite's own.
/// Reads and rare writes keep using GRDB as usual.
struct BoundStatement {
    private let statement: GRDB.Statement
    private var handle: OpaquePointer { statement.sqliteStatement }
    private var index: Int32 = 0

    init(_ statement: GRDB.Statement) {
        self.statement = statement
    }

    mutating func bind(_ value: String?) {
        bindNext(value) { handle, index, value in
            var value = value
            return value.withUTF8 { bytes in
                sqlite3_bind_text(handle, index, bytes.baseAddress, Int32(bytes.count), transient)
            }
        }
    }

    mutating func bind(_ value: Double?) {
        bindNext(value) { sqlite3_bind_double($0, $1, $2) }
    }

    mutating func bind(_ value: Int64?) {
        bindNext(value) { sqlite3_bind_int64($0, $1, $2) }
    }

    /// Binds the next parameter: `value` with `bindValue` (given the statement and the parameter's index), NULL when
    /// there is none.
    @inline(__always)
    private mutating func bindNext<Value>(
        _ value: Value?,
        _ bindValue: (OpaquePointer, Int32, Value) -> Int32
    ) {
        index += 1
        if let value {
            _ = bindValue(handle, index, value)
        } else {
            sqlite3_bind_null(handle, index)
        }
    }

    mutating func bind(_ value: Int) { bind(Int64(value)) }

    /// Binds bytes as a blob; no bytes is an empty blob, not NULL.
    mutating func bind(_ bytes: [UInt8]) {
        index += 1
        bytes.withUnsafeBytes { buffer in
            // A zero-length blob with a null pointer would be bound as NULL.
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                sqlite3_bind_zeroblob(handle, index, 0)
                return
            }
            _ = sqlite3_bind_blob(handle, index, base, Int32(buffer.count), transient)
        }
    }

    mutating func bind(_ value: Int32) { bind(Int64(value)) }

    /// Runs the statement with the values bound since the last run, then makes it ready for the next.
    ///
    /// - Throws: GRDB's `DatabaseError` with SQLite's code and message when the statement fails.
    mutating func execute() throws {
        precondition(index == sqlite3_bind_parameter_count(handle), "every parameter must be bound")
        index = 0
        let code = sqlite3_step(handle)
        // Reset keeps the compiled statement for the next row; the values are all rebound then.
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            let database = sqlite3_db_handle(handle)
            throw DatabaseError(
                resultCode: ResultCode(rawValue: sqlite3_extended_errcode(database)),
                message: String(cString: sqlite3_errmsg(database)),
                sql: statement.sql
            )
        }
    }
}

/// SQLite copies the bytes during the bind call: the Swift buffer only lives that long.
private let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
