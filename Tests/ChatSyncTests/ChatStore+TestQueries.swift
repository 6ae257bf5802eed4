import GRDB

@testable import ChatSync

/// Store queries only the tests ask: kept out of the library.
extension ChatStore {
    /// How many cached messages of a channel match `filter` strictly between two keys.
    func countMessages(
        channelURL: String, after lower: MessageKey, before upper: MessageKey,
        filter: MessageFilter = .init()
    ) throws -> Int {
        try read { db in
            var sql =
                "SELECT COUNT(*) FROM message WHERE channel_url = ? AND (created_at, message_id) > (?, ?) AND (created_at, message_id) < (?, ?)"
            var arguments: StatementArguments = [channelURL, lower.createdAt, lower.messageId, upper.createdAt, upper.messageId]
            arguments += StatementArguments(Self.appendFilter(filter, to: &sql))
            return try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) ?? 0
        }
    }

    /// The range holding `key`, if the cache knows one.
    func chunk(channelURL: String, containing key: MessageKey) throws -> Chunk? {
        try chunks(channelURL: channelURL).first { $0.contains(key) }
    }

    /// Records `chunk` as complete, merged with the ranges it overlaps or touches, as the
    /// engine's `storeBatch` does; answers the merged range.
    @discardableResult
    func addChunk(_ chunk: Chunk) throws -> Chunk {
        let merged = Chunk.merging(chunk, into: try chunks(channelURL: chunk.channelURL))
        try write { db in try Self.replaceChunks(merged, of: chunk.channelURL, in: db) }
        return merged.first { $0.contains(chunk.start) } ?? chunk
    }

    /// The number of cached succeeded messages (all channels).
    func messageCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM message") ?? 0 }
    }

    /// What the cache still holds of one channel beyond its row: messages, complete ranges,
    /// its message change-log token and its use record, counted together.
    func historyRows(channelURL: String) throws -> Int {
        try read { db in
            var rows = 0
            for table in ["message", "chunk", "channel_use"] {
                rows += try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table) WHERE channel_url = ?", arguments: [channelURL]) ?? 0
            }
            rows +=
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM sync_token WHERE scope = ?", arguments: [Self.messageTokenScope(channelURL)]) ?? 0
            return rows
        }
    }

    /// How many messages of a channel the record of messages synced lately holds on disk.
    func syncedLatelyRows(channelURL: String) throws -> Int {
        try read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM synced_lately WHERE channel_url = ?", arguments: [channelURL]) ?? 0
        }
    }

    /// How many messages the record of messages synced lately holds on disk (all channels).
    func syncedLatelyRows() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM synced_lately") ?? 0 }
    }
}
