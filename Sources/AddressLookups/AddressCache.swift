public import Addresses
import Foundation
import GRDB

/// The street addresses the provider gave, by bucket, in a SQLite file of their own (`addresses.sqlite` in the state
/// directory): kept across restarts, never part of the checkpoint (nothing the worker emits depends on it).
///
/// Each answer keeps when it was fetched and when it expires; an expired one is still returned (the caller shows it
/// as stale while it asks again). At most `capacity` answers are kept: the least recently used go first. Times are
/// wall-clock milliseconds since the epoch, given by the caller, because answers outlive the process.
///
/// Calls block on disk I/O: call them off Swift's cooperative pool (the address service has a thread for them).
public final class AddressCache: Sendable {
    /// The file's name inside the state directory.
    public static let fileName = "addresses.sqlite"

    private let database: DatabasePool
    public let capacity: Int

    /// An answer kept for a bucket.
    public struct Entry: Equatable, Sendable {
        /// The address, or nil when the provider said none lies at the bucket's centre.
        public let address: StreetAddress?
        public let fetchedAt: Int64
        public let expiresAt: Int64

        public init(address: StreetAddress?, fetchedAt: Int64, expiresAt: Int64) {
            self.address = address
            self.fetchedAt = fetchedAt
            self.expiresAt = expiresAt
        }

        public func isExpired(at now: Int64) -> Bool { now >= expiresAt }
    }

    /// Opens (creating if needed) the cache in `directory`.
    ///
    /// - Parameters:
    ///   - directory: the state directory.
    ///   - capacity: how many answers to keep. Default: 100,000 (about 20 MB).
    /// - Throws: ``AddressCacheError`` when the directory or file cannot be used.
    public init(directory: String, capacity: Int = 100_000) throws(AddressCacheError) {
        precondition(capacity > 0, "room for at least one answer")
        self.capacity = capacity
        var configuration = Configuration()
        configuration.label = "geoworker.addresses"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            database = try DatabasePool(path: directory + "/" + Self.fileName, configuration: configuration)
            try database.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE IF NOT EXISTS address (
                            meters INTEGER NOT NULL, row INTEGER NOT NULL, col INTEGER NOT NULL,
                            answer TEXT,                 -- StreetAddress as JSON; NULL: none at the bucket's centre
                            fetched_at INTEGER NOT NULL, -- milliseconds since the epoch
                            expires_at INTEGER NOT NULL,
                            used_at INTEGER NOT NULL,    -- last read or written: the least recent go first
                            PRIMARY KEY (meters, row, col)
                        ) WITHOUT ROWID;
                        CREATE INDEX IF NOT EXISTS address_by_use ON address(used_at);
                        """
                )
            }
        } catch {
            throw AddressCacheError(.open, error)
        }
    }

    /// The answer kept for `bucket`, expired or not, marked as used at `now`; nil when there is none.
    public func entry(for bucket: AddressBucket, now: Int64) throws(AddressCacheError) -> Entry? {
        do {
            return try database.write { db in
                let key: [any DatabaseValueConvertible] = [bucket.meters, bucket.row, bucket.column]
                guard
                    let row = try Row.fetchOne(
                        db,
                        sql:
                            "SELECT answer, fetched_at, expires_at FROM address WHERE meters = ? AND row = ? AND col = ?",
                        arguments: StatementArguments(key)
                    )
                else { return nil }
                try db.execute(
                    sql: "UPDATE address SET used_at = ? WHERE meters = ? AND row = ? AND col = ?",
                    arguments: StatementArguments([now] + key)
                )
                let answer: String? = row[0]
                let address = try answer.map { try JSONDecoder().decode(StreetAddress.self, from: Data($0.utf8)) }
                return Entry(address: address, fetchedAt: row[1], expiresAt: row[2])
            }
        } catch {
            throw AddressCacheError(.read, error)
        }
    }

    /// When the answers kept for `buckets` expire, each marked as used at `now`; a bucket without an answer is absent.
    ///
    /// One transaction for them all: a prefetch looks at hundreds of buckets at once and needs no answer's content.
    public func expiries(of buckets: [AddressBucket], now: Int64) throws(AddressCacheError) -> [AddressBucket: Int64] {
        do {
            return try database.write { db in
                var expiries: [AddressBucket: Int64] = [:]
                for bucket in buckets {
                    let key: [any DatabaseValueConvertible] = [bucket.meters, bucket.row, bucket.column]
                    guard
                        let expiry = try Int64.fetchOne(
                            db,
                            sql: "SELECT expires_at FROM address WHERE meters = ? AND row = ? AND col = ?",
                            arguments: StatementArguments(key)
                        )
                    else { continue }
                    expiries[bucket] = expiry
                    try db.execute(
                        sql: "UPDATE address SET used_at = ? WHERE meters = ? AND row = ? AND col = ?",
                        arguments: StatementArguments([now] + key)
                    )
                }
                return expiries
            }
        } catch {
            throw AddressCacheError(.read, error)
        }
    }

    /// Keeps `entry` for `bucket` (replacing what was there), and lets the least recently used answers go beyond the
    /// capacity.
    public func store(_ entry: Entry, for bucket: AddressBucket, now: Int64) throws(AddressCacheError) {
        do {
            let answer = try entry.address.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
            try database.write { db in
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO address (meters, row, col, answer, fetched_at, expires_at, used_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        bucket.meters, bucket.row, bucket.column, answer, entry.fetchedAt, entry.expiresAt, now,
                    ]
                )
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM address") ?? 0
                guard count > capacity else { return }
                try db.execute(
                    sql: """
                        DELETE FROM address WHERE (meters, row, col) IN
                            (SELECT meters, row, col FROM address ORDER BY used_at LIMIT ?)
                        """,
                    arguments: [count - capacity]
                )
            }
        } catch {
            throw AddressCacheError(.write, error)
        }
    }

    /// How many answers are kept.
    public func count() throws(AddressCacheError) -> Int {
        do {
            return try database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM address") ?? 0 }
        } catch {
            throw AddressCacheError(.read, error)
        }
    }
}
