import Foundation
import GRDB
import Logging

/// The SQLite cache and outbox of one user, on GRDB.
///
/// Every method runs synchronously on the caller's task; the sync engine is the only
/// writer, so each change is one transaction that readers never see half done.
/// Database errors leave as ``SyncManagerError``: damaged files as
/// ``SyncManagerError/Code/corruptDatabase``, everything else as
/// ``SyncManagerError/Code/databaseIO``.
final class ChatStore: Sendable {
    /// A pool in WAL mode for a file, a queue for an in-memory cache.
    let writer: any DatabaseWriter
    /// The database file, or `nil` for an in-memory cache.
    let path: String?
    let userId: String
    /// Checkpoints the write-ahead log off the writer's thread; `nil` for an in-memory cache.
    private let checkpointer: WALCheckpointer?
    /// Keeps the file to this store until it closes; `nil` for an in-memory cache.
    private let fileLock: CacheFileLock?

    private init(
        writer: any DatabaseWriter, path: String?, userId: String, checkpointer: WALCheckpointer?, fileLock: CacheFileLock?
    ) {
        self.writer = writer
        self.path = path
        self.userId = userId
        self.checkpointer = checkpointer
        self.fileLock = fileLock
    }

    // MARK: - Opening

    /// Opens (or creates) the cache of `userId`.
    ///
    /// Checks, in this order and before anything is written: no other store has the file
    /// open (``CacheFileLock``); the file looks like a whole SQLite database; it belongs
    /// to `userId`; its schema is not newer than this library's. Then it migrates the schema.
    /// A failed open releases the file again.
    static func open(path: String?, userId: String, walLimits: WALCheckpointer.Limits = .init()) throws -> ChatStore {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // The pool's connections can meet on a lock: a reader connection opened while the
        // writer commits may have to rebuild the WAL index, which briefly locks out the
        // writer. SQLite then reports "database is locked" at once unless told to wait
        // (found by the soak: a relaunch's first trim opened a reader while a write began).
        // Every lock here is held for one short transaction, so a few seconds is ample.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Only a new, empty file can take incremental vacuum (see releaseFreePages), and
            // only before its journal turns to WAL; on any other file the pragma does nothing.
            if !db.configuration.readonly, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") == 0 {
                try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            }
            try db.execute(sql: "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536")
        }
        // Locked first: a second manager must not even read a file whose owner writes it.
        let fileLock = try path.map { try CacheFileLock.acquire(forDatabaseAt: $0) }
        if let path { try DatabaseFileCheck.validate(path: path) }
        let writer: any DatabaseWriter
        let checkpointer: WALCheckpointer?
        do {
            if let path {
                writer = try DatabasePool(path: path, configuration: configuration)
            } else {
                writer = try DatabaseQueue(configuration: configuration)
            }
        } catch {
            throw mapped(error, while: "opening the cache")
        }
        do {
            checkpointer = try path.map { try WALCheckpointer(path: $0, limits: walLimits) }
        } catch {
            try? writer.close()
            throw mapped(error, while: "opening the cache")
        }
        let store = ChatStore(writer: writer, path: path, userId: userId, checkpointer: checkpointer, fileLock: fileLock)
        do {
            try store.checkOwnerAndVersion()
            try StoreSchema.migrator.migrate(writer)
            try writer.write { db in
                try db.execute(
                    sql: "INSERT OR IGNORE INTO metadata (id, user_id, schema_version) VALUES (1, ?, ?)",
                    arguments: [userId, StoreSchema.version])
            }
            try store.prepareFirstScreenStatements()
            if let checkpointer { writer.writeWithoutTransaction { checkpointer.install(on: $0) } }
        } catch {
            checkpointer?.close()
            try? writer.close()
            throw mapped(error, while: "opening the cache")
        }
        return store
    }

    /// Prepares, on the connection the engine reads with, the statements that a first
    /// screen runs (a channel's ranges, its newest message, the page below a range's end,
    /// the next page back), by running each once on a channel that cannot exist: a new
    /// connection prepares each statement on first use, which made the first page on a
    /// new manager cost twice the next one. Opening pays it instead, before a screen waits.
    private func prepareFirstScreenStatements() throws {
        _ = try chunks(channelURL: "")
        for (inclusive, bound) in [(true, nil), (true, MessageKey.min), (false, MessageKey.min)] {
            _ = try page(channelURL: "", direction: .older, from: .max, inclusive: inclusive, bound: bound, limit: 1)
        }
    }

    private func checkOwnerAndVersion() throws {
        let found: (user: String, version: Int)? = try writer.read { db in
            let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            guard tables.contains("metadata") else {
                if tables.contains(where: { !$0.hasPrefix("sqlite_") && $0 != "grdb_migrations" }) {
                    throw SyncManagerError(.corruptDatabase, "the file is an SQLite database, but not a ChatSync cache")
                }
                return nil
            }
            guard let row = try Row.fetchOne(db, sql: "SELECT user_id, schema_version FROM metadata WHERE id = 1")
            else { return nil }
            return (row[0], row[1])
        }
        guard let found else { return }
        if found.version > StoreSchema.version {
            throw SyncManagerError(
                .databaseIO,
                "the cache has schema version \(found.version), newer than this library supports "
                    + "(\(StoreSchema.version)); update ChatSync or use another file")
        }
        // By bytes: ids that Swift's `==` takes for one may be two users to the service.
        if !found.user.hasSameBytes(as: userId) {
            throw SyncManagerError(.userMismatch, "the cache belongs to user '\(found.user)', not '\(userId)'")
        }
    }

    /// Waits for the background checkpoint started last; answers how many have run (0
    /// for an in-memory cache). For tests.
    func waitForCheckpoints() -> Int { checkpointer?.waitUntilIdle() ?? 0 }

    /// Copies the whole write-ahead log into the file and empties it (a file cache's size
    /// is then its data's). For tests.
    func checkpointWholeLog() throws {
        do { try checkpointer?.checkpointWholeLog() } catch { throw Self.mapped(error, while: "checkpointing the cache") }
    }

    /// Folds the write-ahead log into the file and closes the database; later calls throw.
    ///
    /// The checkpoint leaves one self-contained file behind, which is what a user
    /// copying or backing up the cache expects, and lets the next open check its size.
    func close() {
        // The checkpoint thread first: the truncating checkpoint below must find the log free.
        checkpointer?.close()
        try? writer.writeWithoutTransaction { db in
            if let checkpointer { checkpointer.uninstall(from: db) }
            _ = try db.checkpoint(.truncate)
        }
        do {
            try writer.close()
            fileLock?.release()  // last: the next manager may open the file now
        } catch {
            // Still open (GRDB refuses while statements live): the lock goes with the store,
            // and the next manager on the file is refused until then.
            Logger(label: "ChatSync").warning("the cache at \(path ?? "memory") did not close: \(error)")
        }
    }

    // MARK: - Access with error mapping

    /// Runs reads on the writer connection, outside a transaction: the engine is the only
    /// writer and runs one change at a time, so a read cannot see half of one, and it
    /// skips the reader pool's hand-off and transaction (a page read is one SELECT).
    ///
    /// Reentrant, like ``write(_:)``, so that it can run inside ``batched(_:)``.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        do { return try writer.unsafeReentrantWrite(body) } catch { throw Self.mapped(error, while: "reading the cache") }
    }

    /// Runs `body` as one transaction, or as a savepoint of the transaction of an
    /// enclosing ``batched(_:)``: either way a failing `body` undoes only its own changes.
    func write<T>(_ body: (Database) throws -> T) throws -> T {
        try write { db, _ in try body(db) }
    }

    /// ``write(_:)``, telling `body` whether it runs in a transaction of its own (`true`)
    /// or inside a ``batched(_:)`` one, whose commit may still fail and undo it.
    func write<T>(_ body: (Database, _ ownTransaction: Bool) throws -> T) throws -> T {
        do {
            return try writer.unsafeReentrantWrite { db in
                guard db.isInsideTransaction else { return try Self.inImmediateTransaction(db) { try body($0, true) } }
                var result: T?
                try db.inSavepoint {
                    result = try body(db, false)
                    return .commit
                }
                return result!  // set: inSavepoint returned without throwing, so body ran to its end
            }
        } catch {
            throw Self.mapped(error, while: "writing the cache")
        }
    }

    /// How many rows any insert, update or deletion on this connection has changed since
    /// it opened: a mark that moves with every change to the cache (the engine is its only
    /// writer), so that what was known of the cache at one mark still holds at the same.
    func changeMark() throws -> Int {
        try read { $0.totalChangesCount }
    }

    /// Runs `body` in a transaction of its own (`BEGIN IMMEDIATE`, as GRDB begins a
    /// write), committed when it returns and rolled back when it or the commit throws.
    ///
    /// The three statements are cached: GRDB's `inTransaction` prepares `BEGIN` and
    /// `COMMIT` anew for every transaction, which cost a send more than its insert.
    private static func inImmediateTransaction<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        try step(db, "BEGIN IMMEDIATE TRANSACTION")
        do {
            let result = try body(db)
            try step(db, "COMMIT TRANSACTION")
            return result
        } catch {
            // GRDB's own rollback, on this rare path: it skips a transaction that SQLite
            // already ended (a full disk, an I/O error), and ignores an interrupt. The
            // first error is the one that tells what went wrong, as with `inTransaction`.
            try? db.rollback()
            throw error
        }
    }

    private static func step(_ db: Database, _ sql: String) throws {
        try StatementBinder.execute(db.cachedStatement(sql: sql).sqliteStatement, in: db) { _ in }
    }

    /// Runs the store calls of `body` in one transaction, so that SQLite commits (and
    /// writes the changed pages to its log) once instead of once per call: for loops
    /// that change many rows one by one, such as settling a batch of look-ups.
    ///
    /// Each call inside keeps its own all-or-nothing: a failing call undoes only itself
    /// and its error reaches `body`, as without the batch; what `body` throws is thrown
    /// after the rest is committed. Only a failing commit loses the whole batch; the
    /// callers are written so that the file then still holds the state before it (an
    /// outbox row settled in memory but not in the file is settled again at the next launch).
    func batched<T>(_ body: () throws -> T) throws -> T {
        var outcome: Result<T, any Error>?
        do {
            try writer.unsafeReentrantWrite { db in
                try db.inTransaction {
                    outcome = Result { try body() }
                    return .commit
                }
            }
        } catch {
            throw Self.mapped(error, while: "writing the cache")
        }
        // Set: inTransaction ran the closure before committing.
        return try outcome!.get()
    }

    /// Turns any error of the storage layer into a ``SyncManagerError``.
    static func mapped(_ error: any Error, while doing: String) -> SyncManagerError {
        if let error = error as? SyncManagerError { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return SyncManagerError(
                    .corruptDatabase, "the cache file is damaged or not a database (\(doing)): \(error.message ?? "\(error)")")
            case .SQLITE_MISUSE where (error.message ?? "").contains("closed"):
                return SyncManagerError(.closed, "the cache is closed")
            default:
                break
            }
            return SyncManagerError(.databaseIO, "\(doing) failed: \(error)")
        }
        return SyncManagerError(.databaseIO, "\(doing) failed: \(error)")
    }
}
