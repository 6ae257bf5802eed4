import Foundation
import GRDB

// MARK: - Channels and sync tokens

extension ChatStore {
    /// Inserts or replaces channels in one transaction.
    func upsertChannels(_ channels: [Channel]) throws {
        guard !channels.isEmpty else { return }
        try write { db in try Self.upsertChannels(channels, in: db) }
    }

    static func upsertChannels(_ channels: [Channel], in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO channel (channel_url, name, custom_type, data, member_ids, created_at, updated_at,
                                                last_message, last_activity_at, is_frozen)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        let encoder = JSONEncoder()
        for channel in channels {
            let members = String(decoding: try encoder.encode(channel.memberIds), as: UTF8.self)
            let last = try channel.lastMessage.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            try statement.execute(arguments: [
                channel.channelURL, channel.name, channel.customType, channel.data, members, channel.createdAt,
                channel.updatedAt, last, channel.lastActivityAt, channel.isFrozen,
            ])
        }
    }

    /// Removes a channel and everything cached of it (messages, chunks, token); keeps its outbox.
    func deleteChannel(_ channelURL: String) throws {
        try write { db in try Self.deleteChannel(channelURL, in: db) }
    }

    static func deleteChannel(_ channelURL: String, in db: Database) throws {
        for table in ["channel", "message", "chunk", "channel_use", "synced_lately"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE channel_url = ?", arguments: [channelURL])
        }
        try db.execute(sql: "DELETE FROM sync_token WHERE scope = ?", arguments: [Self.messageTokenScope(channelURL)])
    }

    /// One cached channel.
    func channel(_ channelURL: String) throws -> Channel? {
        try read { db in try Self.channel(channelURL, in: db) }
    }

    /// One cached channel, read in the caller's transaction.
    static func channel(_ channelURL: String, in db: Database) throws -> Channel? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM channel WHERE channel_url = ?"), arguments: [channelURL])
            .map(Self.channel(from:))
    }

    /// Cached channels that match `query`, in its order, read by keyset: those that sort
    /// after `after` (exclusive) and up to `through` (inclusive), at most `limit`.
    ///
    /// Each order has an index (schema 3), so a page reads its own rows, however many
    /// channels the cache holds; ties fall back to `channel_url` as in ``ChannelOrder``.
    func channels(
        matching query: ChannelListQuery, after: Channel? = nil, through: Channel? = nil, limit: Int? = nil
    ) throws
        -> [Channel]
    {
        try read { db in
            var clauses: [String] = []
            var arguments: StatementArguments = []
            if !query.includeEmpty { clauses.append("last_message IS NOT NULL") }
            if let customTypes = query.customTypes {
                let values = customTypes.sorted()
                clauses.append("custom_type IN (" + values.map { _ in "?" }.joined(separator: ",") + ")")
                arguments += StatementArguments(values)
            }
            let (column, descending) = Self.sortColumn(query.order)
            func keyset(_ channel: Channel, later: Bool) {
                let value = Self.sortValue(channel, query.order)
                // Later in a descending order is a smaller value; ties go by URL, ascending.
                let (strict, loose) = later == descending ? ("<", "<=") : (">", ">=")
                clauses.append("\(column) \(loose) ? AND (\(column) \(strict) ? OR channel_url \(later ? ">" : "<=") ?)")
                arguments += [value, value, channel.channelURL]
            }
            if let after { keyset(after, later: true) }
            if let through { keyset(through, later: false) }
            var sql = "SELECT * FROM channel"
            if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
            sql += " ORDER BY \(column)\(descending ? " DESC" : ""), channel_url"
            if let limit {
                sql += " LIMIT ?"
                arguments += [limit]
            }
            let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
            var channels: [Channel] = []
            while let row = try rows.next() { channels.append(Self.channel(from: row)) }
            return channels
        }
    }

    private static func sortColumn(_ order: ChannelOrder) -> (String, descending: Bool) {
        switch order {
        case .latestLastMessage: ("last_activity_at", true)
        case .chronological: ("created_at", true)
        case .channelNameAlphabetical: ("name", false)
        }
    }

    private static func sortValue(_ channel: Channel, _ order: ChannelOrder) -> any DatabaseValueConvertible {
        switch order {
        case .latestLastMessage: channel.lastActivityAt
        case .chronological: channel.createdAt
        case .channelNameAlphabetical: channel.name
        }
    }

    private static func channel(from row: Row) -> Channel {
        let decoder = JSONDecoder()
        let members = (row["member_ids"] as String?).flatMap { try? decoder.decode([String].self, from: Data($0.utf8)) }
        let last = (row["last_message"] as String?).flatMap { try? decoder.decode(Message.self, from: Data($0.utf8)) }
        return Channel(
            channelURL: row["channel_url"], name: row["name"], customType: row["custom_type"], data: row["data"],
            memberIds: members ?? [], createdAt: row["created_at"], updatedAt: row["updated_at"],
            lastMessage: last, isFrozen: row["is_frozen"])
    }

    // MARK: Sync tokens

    static func messageTokenScope(_ channelURL: String) -> String { "messages:" + channelURL }
    static let channelTokenScope = "channels"

    /// The change-log token stored for `scope`.
    func syncToken(scope: String) throws -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT token FROM sync_token WHERE scope = ?", arguments: [scope]) }
    }

    /// Stores the change-log token of `scope`.
    func setSyncToken(_ token: String, scope: String) throws {
        try write { db in try Self.setSyncToken(token, scope: scope, in: db) }
    }

    static func setSyncToken(_ token: String, scope: String, in db: Database) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO sync_token (scope, token) VALUES (?, ?)", arguments: [scope, token])
    }

    // MARK: Clearing

    /// Drops one channel's cached messages, complete ranges and change-log token in one
    /// transaction; keeps the outbox and the channel.
    func forgetCachedHistory(channelURL: String) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM message WHERE channel_url = ?", arguments: [channelURL])
            try db.execute(sql: "DELETE FROM chunk WHERE channel_url = ?", arguments: [channelURL])
            try db.execute(sql: "DELETE FROM synced_lately WHERE channel_url = ?", arguments: [channelURL])
            try db.execute(sql: "DELETE FROM sync_token WHERE scope = ?", arguments: [Self.messageTokenScope(channelURL)])
        }
    }

    /// Drops every cached channel and the channel change-log token in one transaction;
    /// keeps messages, their ranges and tokens, and the outbox.
    func forgetCachedChannels() throws {
        try write { db in
            try db.execute(sql: "DELETE FROM channel")
            try db.execute(sql: "DELETE FROM sync_token WHERE scope = ?", arguments: [Self.channelTokenScope])
        }
    }

    /// Drops cached messages, chunks, channels and tokens in one transaction; keeps the outbox.
    func clearCache() throws {
        try write { db in
            try db.execute(
                sql: """
                    DELETE FROM message; DELETE FROM chunk; DELETE FROM channel; DELETE FROM sync_token; DELETE FROM channel_use;
                    DELETE FROM synced_lately
                    """)
        }
    }
}
