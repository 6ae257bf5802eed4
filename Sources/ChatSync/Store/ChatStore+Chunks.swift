import GRDB

// MARK: - Chunks

extension ChatStore {
    /// The channel's complete ranges, sorted by start.
    func chunks(channelURL: String) throws -> [Chunk] {
        try read { db in try Self.chunks(channelURL: channelURL, in: db) }
    }

    static func chunks(channelURL: String, in db: Database) throws -> [Chunk] {
        let statement = try db.cachedStatement(
            sql: "SELECT start_at, start_id, end_at, end_id FROM chunk WHERE channel_url = ? ORDER BY start_at, start_id")
        var chunks: [Chunk] = []
        // Through SQLite's C API: every fetch that is not served from memory starts here.
        try StatementBinder.eachRow(statement.sqliteStatement, in: db) {
            $0.text(channelURL)
        } read: { row in
            chunks.append(
                Chunk(
                    channelURL: channelURL,
                    start: MessageKey(createdAt: row.int(0) ?? 0, messageId: row.int(1) ?? 0),
                    end: MessageKey(createdAt: row.int(2) ?? 0, messageId: row.int(3) ?? 0)))
        }
        return chunks
    }

    /// Replaces the channel's complete ranges with `chunks` (all of one channel, merged by
    /// ``Chunk/merging(_:into:)``: the engine merges, the store only records).
    static func replaceChunks(_ chunks: [Chunk], of channelURL: String, in db: Database) throws {
        // Cached and bound through SQLite's C API: every stored sync batch that moves a
        // range comes here, and preparing the deletion anew each time cost more than it.
        let delete = try db.cachedStatement(sql: "DELETE FROM chunk WHERE channel_url = ?").sqliteStatement
        try StatementBinder.execute(delete, in: db) { $0.text(channelURL) }
        let insert = try db.cachedStatement(
            sql: "INSERT INTO chunk (channel_url, start_at, start_id, end_at, end_id) VALUES (?, ?, ?, ?, ?)"
        ).sqliteStatement
        for range in chunks {
            try StatementBinder.execute(insert, in: db) { binder in
                binder.text(channelURL)
                binder.int(range.start.createdAt)
                binder.int(range.start.messageId)
                binder.int(range.end.createdAt)
                binder.int(range.end.messageId)
            }
        }
    }

    /// Stores a batch of messages a sync brought and records the channel's complete
    /// ranges as `chunks` (when they changed), in one transaction. The service answered
    /// every message inside `authoritative`, so cached rows there that the batch lacks
    /// were deleted on the server: they are removed, and their ids answered.
    func applySyncBatch(
        _ messages: [Message], channelURL: String, chunks: [Chunk]?, authoritative: KeyRange? = nil
    ) throws -> SyncBatchWrite {
        try write { db, ownTransaction in
            var removed: [Int64] = []
            if let authoritative {
                // Through SQLite's C API, and the batch's ids gathered only when the span
                // holds cached rows at all: a batch of new history (every page of a
                // scroll back) finds none.
                let sql = Self.spanIdsSQL[(authoritative.lowerInclusive ? 2 : 0) + (authoritative.upperInclusive ? 1 : 0)]
                var cached: [Int64] = []
                try StatementBinder.eachRow(db.cachedStatement(sql: sql).sqliteStatement, in: db) { binder in
                    binder.text(channelURL)
                    binder.int(authoritative.lower.createdAt)
                    binder.int(authoritative.lower.messageId)
                    binder.int(authoritative.upper.createdAt)
                    binder.int(authoritative.upper.messageId)
                } read: { row in
                    cached.append(row.int(0) ?? 0)
                }
                if !cached.isEmpty {
                    let answered = Set(messages.map(\.messageId))
                    for id in cached where !answered.contains(id) {
                        _ = try Self.deleteMessage(channelURL: channelURL, messageId: id, in: db)
                        removed.append(id)
                    }
                }
            }
            let wroteEvery = try Self.upsertMessages(messages, in: db)
            if let chunks { try Self.replaceChunks(chunks, of: channelURL, in: db) }
            // Inside a batched transaction, a failing commit could still undo the rows
            // while the mark stays: only a transaction of its own vouches for them.
            let verbatim = wroteEvery && ownTransaction && authoritative != nil
            return SyncBatchWrite(removed: removed, verbatimAt: verbatim ? db.totalChangesCount : nil)
        }
    }
}

extension ChatStore {
    /// The ids of a channel's cached messages inside a span, by the span's inclusivity
    /// (`lowerInclusive` counts 2, `upperInclusive` 1): built once, not per batch.
    fileprivate static let spanIdsSQL: [String] = (0..<4).map { shape in
        let lower = shape & 2 != 0 ? ">=" : ">"
        let upper = shape & 1 != 0 ? "<=" : "<"
        return """
            SELECT message_id FROM message WHERE channel_url = ?
            AND (created_at, message_id) \(lower) (?, ?) AND (created_at, message_id) \(upper) (?, ?)
            """
    }
}

/// What storing a sync batch did.
struct SyncBatchWrite {
    /// The cached messages inside the authoritative span that the batch lacked, now removed.
    var removed: [Int64]
    /// When every message of the batch was stored as given (no cached copy was newer) in
    /// a transaction of its own: the store's ``ChatStore/changeMark()`` after it. While
    /// the mark stays there, the cache holds exactly the batch's messages inside the
    /// authoritative span.
    var verbatimAt: Int?
}

/// A range of keys with open or closed ends.
struct KeyRange: Sendable, Hashable {
    var lower: MessageKey
    var lowerInclusive: Bool
    var upper: MessageKey
    var upperInclusive: Bool

    /// Whether `key` lies inside the range.
    func admits(_ key: MessageKey) -> Bool {
        (lowerInclusive ? lower <= key : lower < key) && (upperInclusive ? key <= upper : key < upper)
    }
}
