import Dispatch
import GRDB
import GRDBSQLite

/// Folds the write-ahead log back into the cache file on a connection and a thread of its
/// own, so that a commit does not wait for it.
///
/// SQLite's own automatic checkpoint runs inside the commit that grows the log past
/// 1,000 pages: it copies every page back and syncs the file, milliseconds that land on
/// whichever call committed (a send, a page of a sync). Here the writer's commit only
/// notes the log's length (a WAL hook, which also turns the automatic checkpoint off),
/// and a passive checkpoint runs on a second connection, which SQLite lets proceed
/// beside the writer: it never takes the write lock and never waits for one. Should the
/// log still reach ``Limits/inlinePages`` (the checkpoint thread starved), the commit that finds
/// it so checkpoints itself, as SQLite would have, so the log stays bounded.
final class WALCheckpointer: Sendable {
    /// When checkpoints start, in pages of the log.
    struct Limits: Sendable {
        /// How far the log grows between two background checkpoints (SQLite's automatic
        /// checkpoint threshold).
        var backgroundPages: Int32 = 1_000
        /// The log's length from which the committing connection checkpoints itself.
        var inlinePages: Int32 = 16_000
    }

    private struct State {
        var scheduled = false
        var closed = false
        /// The log's length when the last checkpoint was started: the next one waits for
        /// ``Limits/backgroundPages`` more (each checkpoint syncs the file, so one per commit
        /// while the log stays long would cost the writer more than SQLite's own).
        var pagesAtLastStart: Int32 = 0
        /// Background checkpoints run to their end.
        var completed = 0
    }

    let limits: Limits
    private let connection: DatabaseQueue
    private let queue = DispatchQueue(label: "ChatSync.WALCheckpointer")
    private let state = LockedState(State())

    /// Opens the checkpoint connection on the cache file at `path` (in WAL mode already).
    init(path: String, limits: Limits = Limits()) throws {
        self.limits = limits
        var configuration = Configuration()
        // A passive checkpoint never waits on a lock; this only covers opening the file.
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -512") }
        connection = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Starts noting the writer connection's commits.
    ///
    /// The hook holds this object unretained: the store that owns it and the writer
    /// removes the hook (``uninstall(from:)``) before it lets either go, and no commit can
    /// happen on the writer without the store, so the hook never outlives it.
    func install(on writer: Database) {
        sqlite3_wal_hook(writer.sqliteConnection, Self.hook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops noting the writer's commits (SQLite's automatic checkpoint stays off: the
    /// store checkpoints the whole log when it closes).
    func uninstall(from writer: Database) {
        sqlite3_wal_hook(writer.sqliteConnection, nil, nil)
    }

    /// Called by SQLite on the writer's thread after each commit, with the log's length.
    private static let hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
        context, writer, _, pages in
        guard let context else { return SQLITE_OK }
        let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
        if pages >= checkpointer.limits.inlinePages {
            // Busy (the background checkpoint runs) is fine: that one will shorten the log.
            sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } else {
            checkpointer.noteLog(pages: pages)
        }
        return SQLITE_OK
    }

    /// Starts a passive checkpoint on the checkpoint thread once the log has grown by
    /// ``Limits/backgroundPages`` since the last one started, unless one is still due.
    private func noteLog(pages: Int32) {
        let start = state.withLock { state in
            // A shorter log than at the last start: the writer restarted it after a full checkpoint.
            if pages < state.pagesAtLastStart { state.pagesAtLastStart = 0 }
            guard !state.scheduled, !state.closed, pages - state.pagesAtLastStart >= limits.backgroundPages else { return false }
            state.scheduled = true
            state.pagesAtLastStart = pages
            return true
        }
        guard start else { return }
        queue.async { [self] in
            // Cleared first: commits during this checkpoint may need another after it.
            let closed = state.withLock { state in
                state.scheduled = false
                return state.closed
            }
            guard !closed else { return }
            // A failure leaves the log to the next checkpoint (or the writer's own at inlinePages).
            if (try? connection.writeWithoutTransaction({ db in try db.checkpoint(.passive) })) != nil {
                state.withLock { $0.completed += 1 }
            }
        }
    }

    /// Copies the whole log into the file and empties it, after any background checkpoint
    /// (two checkpoints at once would refuse each other), waiting for the writer's
    /// transaction to end.
    func checkpointWholeLog() throws {
        try queue.sync { _ = try connection.writeWithoutTransaction { db in try db.checkpoint(.truncate) } }
    }

    /// Waits for the checkpoint started last, if any; answers how many have run to their end.
    func waitUntilIdle() -> Int {
        queue.sync {}
        return state.withLock { $0.completed }
    }

    /// Waits for a running checkpoint, then closes the connection; later commits start none.
    func close() {
        state.withLock { $0.closed = true }
        queue.sync {}
        try? connection.close()
    }
}
