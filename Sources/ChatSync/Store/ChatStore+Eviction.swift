import GRDB

// MARK: - Eviction: keeping the cache within `messageStoreCapacity`

/// Which end of a channel's history an eviction step takes messages from.
enum HistoryEnd: Sendable {
    /// The oldest messages first.
    case oldest
    /// The newest messages first.
    case newest
}

/// What a trim knows of the cache when it starts.
struct EvictionCensus: Sendable {
    /// Channels that may hold cached messages.
    var channels: Set<String> = []
    /// When each channel was last viewed (a rising sequence).
    var viewed: [String: Int64] = [:]
    /// The number of cached messages, when counted.
    var total: Int?
}

/// What one eviction step did: how many messages left the cache and the channel's
/// complete ranges after it.
struct EvictionStep: Sendable {
    var removed: Int
    var chunks: [Chunk]
}

extension ChatStore {
    /// The channels that may hold cached messages, when each was last viewed (a rising
    /// sequence; channels never viewed are absent), and with `exact` the number of cached
    /// messages.
    ///
    /// Without `exact` the channels come from the small tables (ranges, views), so a
    /// trim costs nothing per cached message; with it they come from the messages
    /// themselves, which finds rows outside every range too. Read on a reader connection
    /// of the pool, so counting a large cache holds up neither the engine nor its writes.
    ///
    /// The census runs off the engine, so the manager may close while it waits for its
    /// connection: it then throws ``SyncManagerError/Code/closed``. (GRDB's `read` on a
    /// closed in-memory queue reaches SQLite with no connection and crashes, so the
    /// closed connection is looked for inside the serialized access, before any statement.)
    func evictionCensus(exact: Bool) throws -> EvictionCensus {
        do {
            return try writer.unsafeRead { db in
                guard db.sqliteConnection != nil else { throw SyncManagerError(.closed, "the cache is closed") }
                // One snapshot for both reads, as `read` would take.
                return try Self.inReadTransaction(db) { try Self.census(db, exact: exact) }
            }
        } catch {
            throw Self.mapped(error, while: "counting the cache")
        }
    }

    private static func census(_ db: Database, exact: Bool) throws -> EvictionCensus {
        var census = EvictionCensus()
        if exact {
            let rows = try Row.fetchCursor(db, sql: "SELECT channel_url, COUNT(*) FROM message GROUP BY channel_url")
            var total = 0
            while let row = try rows.next() {
                census.channels.insert(row[0])
                total += row[1] as Int
            }
            census.total = total
        } else {
            census.channels = Set(
                try String.fetchAll(db, sql: "SELECT channel_url FROM chunk UNION SELECT channel_url FROM channel_use"))
        }
        let uses = try Row.fetchCursor(db, sql: "SELECT channel_url, viewed_seq FROM channel_use")
        while let row = try uses.next() { census.viewed[row[0]] = row[1] }
        return census
    }

    /// Runs `body` in a deferred transaction that only reads, then ends it.
    private static func inReadTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        var result: T?
        try db.inTransaction(.deferred) {
            result = try body()
            return .rollback
        }
        return result!  // set: inTransaction returned without throwing, so body ran to its end
    }

    /// The key of the oldest of the channel's newest `count` cached messages, when the
    /// channel holds older ones too; `nil` when it holds no more than `count`.
    ///
    /// A trim takes closed channels down to their newest batch, least recently viewed
    /// first, so most channels it meets hold exactly that batch already: answering `nil`
    /// for them ends their step here, with this one read.
    func oldestKept(channelURL: String, keeping count: Int) throws -> MessageKey? {
        try read { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT created_at, message_id FROM message WHERE channel_url = ?
                    ORDER BY created_at DESC, message_id DESC LIMIT 2 OFFSET ?
                    """)
            let rows = try Row.fetchAll(statement, arguments: [channelURL, max(count - 1, 0)])
            guard rows.count == 2 else { return nil }
            return MessageKey(createdAt: rows[0][0], messageId: rows[0][1])
        }
    }

    /// Records that the channel is being viewed now: it becomes the most recently viewed.
    func noteViewed(_ channelURL: String) throws {
        try write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO channel_use (channel_url, viewed_seq)
                    VALUES (?, (SELECT COALESCE(MAX(viewed_seq), 0) + 1 FROM channel_use))
                    """)
            try statement.execute(arguments: [channelURL])
        }
    }

    /// Removes up to `count` messages of a channel from `end`, never reaching `limit`
    /// (exclusive: the messages of open views lie beyond it), and shrinks the channel's
    /// complete ranges to what is still cached, in one transaction; `nil` when nothing lies
    /// short of the limit (then no transaction is opened).
    ///
    /// A range loses the evicted part and starts (or ends) at the first message still
    /// cached inside it, or at `limit` when that comes first, so it never claims a message
    /// the cache no longer holds and still covers every open view's span (whose edge may
    /// be a message deleted since); a range left with nothing is dropped.
    func evict(
        channelURL: String, from end: HistoryEnd, count: Int, limit: MessageKey, chunks: [Chunk]
    ) throws -> EvictionStep? {
        guard count > 0 else { return nil }
        // Found before the write transaction, so a step with nothing to take opens none.
        // Nothing writes in between: the engine makes every write, and this runs on it (one
        // manager per cache file: README, Known limitations).
        let cut = try read { db in try Self.evictionCut(channelURL: channelURL, from: end, count: count, limit: limit, in: db) }
        guard let cut else { return nil }
        return try write { db in
            let through = end == .oldest ? "<=" : ">="
            try db.cachedStatement(
                sql: "DELETE FROM message WHERE channel_url = ? AND (created_at, message_id) \(through) (?, ?)"
            ).execute(arguments: [channelURL, cut.createdAt, cut.messageId])
            let removed = db.changesCount
            let shrunk = try chunks.compactMap { chunk in
                try Self.shrink(chunk, evicted: end, through: cut, keeping: limit, in: db)
            }
            if shrunk != chunks { try Self.replaceChunks(shrunk, of: channelURL, in: db) }
            return EvictionStep(removed: removed, chunks: shrunk)
        }
    }

    /// The last message an eviction step takes: the `count`-th from `end`, or the last one
    /// short of `limit`; `nil` when there is none short of it.
    private static func evictionCut(
        channelURL: String, from end: HistoryEnd, count: Int, limit: MessageKey, in db: Database
    ) throws -> MessageKey? {
        let oldest = end == .oldest
        let beyond = oldest ? "<" : ">"
        let order = oldest ? "ASC" : "DESC"
        let cutSQL = """
            SELECT created_at, message_id FROM message WHERE channel_url = ? AND (created_at, message_id) \(beyond) (?, ?)
            ORDER BY created_at \(order), message_id \(order) LIMIT 1 OFFSET ?
            """
        var cutRow = try Row.fetchOne(
            db.cachedStatement(sql: cutSQL), arguments: [channelURL, limit.createdAt, limit.messageId, count - 1])
        if cutRow == nil {
            let lastSQL = """
                SELECT created_at, message_id FROM message WHERE channel_url = ? AND (created_at, message_id) \(beyond) (?, ?)
                ORDER BY created_at \(oldest ? "DESC" : "ASC"), message_id \(oldest ? "DESC" : "ASC") LIMIT 1
                """
            cutRow = try Row.fetchOne(db.cachedStatement(sql: lastSQL), arguments: [channelURL, limit.createdAt, limit.messageId])
        }
        return cutRow.map { MessageKey(createdAt: $0[0], messageId: $0[1]) }
    }

    /// `chunk` after every message from `end` through `cut` left the cache, or `nil`
    /// when nothing of it is left.
    ///
    /// Nothing from `limit` on was touched, so the range still holds from there: an open
    /// view's bound may be a message deleted since, and the span between it and the view's
    /// first message still cached must stay claimed, or a message dated into that span
    /// would be neither shown nor fetched (the view scrolls on from its bound). The ends
    /// of time are never a bound: a range there would be one a catch-up chases.
    private static func shrink(
        _ chunk: Chunk, evicted end: HistoryEnd, through cut: MessageKey, keeping limit: MessageKey, in db: Database
    ) throws -> Chunk? {
        switch end {
        case .oldest:
            if chunk.start > cut { return chunk }
            if chunk.end <= cut { return nil }
            let first = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT created_at, message_id FROM message WHERE channel_url = ? AND (created_at, message_id) > (?, ?)
                        AND (created_at, message_id) <= (?, ?) ORDER BY created_at, message_id LIMIT 1
                        """),
                arguments: [chunk.channelURL, cut.createdAt, cut.messageId, chunk.end.createdAt, chunk.end.messageId])
            let untouched = limit > .min && limit < .max && limit <= chunk.end ? limit : nil
            guard let start = [first.map { MessageKey(createdAt: $0[0], messageId: $0[1]) }, untouched].compactMap({ $0 }).min()
            else { return nil }
            return Chunk(channelURL: chunk.channelURL, start: start, end: chunk.end)
        case .newest:
            if chunk.end < cut { return chunk }
            if chunk.start >= cut { return nil }
            let last = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT created_at, message_id FROM message WHERE channel_url = ? AND (created_at, message_id) < (?, ?)
                        AND (created_at, message_id) >= (?, ?) ORDER BY created_at DESC, message_id DESC LIMIT 1
                        """),
                arguments: [chunk.channelURL, cut.createdAt, cut.messageId, chunk.start.createdAt, chunk.start.messageId])
            let untouched = limit > .min && limit < .max && limit >= chunk.start ? limit : nil
            guard let end = [last.map { MessageKey(createdAt: $0[0], messageId: $0[1]) }, untouched].compactMap({ $0 }).max()
            else { return nil }
            return Chunk(channelURL: chunk.channelURL, start: chunk.start, end: end)
        }
    }

    /// Gives free pages back to the file system, at most `pages` of them, once more than
    /// a quarter of the file is free (incremental vacuum; a cache created before schema 3
    /// has none, and reuses its free pages instead).
    ///
    /// The quarter stays as a reserve: while messages keep arriving and being trimmed,
    /// new rows reuse the pages trims free, which costs nothing, whereas vacuuming moves
    /// pages from the end of the file into the holes, and the file would grow again.
    func releaseFreePages(atMost pages: Int) throws {
        try write { db in
            let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
            let total = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let release = min(free - total / 4, pages)
            guard release > 0 else { return }
            try db.execute(sql: "PRAGMA incremental_vacuum(\(release))")
        }
    }
}
