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
        try write { db in
            for table in ["channel", "message", "chunk"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE channel_url = ?", arguments: [channelURL])
            }
            try db.execute(sql: "DELETE FROM sync_token WHERE scope = ?", arguments: [Self.messageTokenScope(channelURL)])
        }
    }

    /// The members of a cached channel (`nil` when it is not cached), read with one cached statement.
    static func channelMembers(_ channelURL: String, in db: Database) throws -> [String]? {
        let statement = try db.cachedStatement(sql: "SELECT member_ids FROM channel WHERE channel_url = ?")
        guard let json = try String.fetchOne(statement, arguments: [channelURL]) else { return nil }
        return (try? JSONDecoder().decode([String].self, from: Data(json.utf8))) ?? []
    }

    /// One cached channel.
    func channel(_ channelURL: String) throws -> Channel? {
        try read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM channel WHERE channel_url = ?"), arguments: [channelURL])
                .map(Self.channel(from:))
        }
    }

    /// Cached channels in `order`, filtered like a channel list query.
    func channels(
        order: ChannelOrder, includeEmpty: Bool = true, customTypes: Set<String>? = nil,
        limit: Int? = nil, offset: Int = 0
    ) throws -> [Channel] {
        try read { db in
            var clauses: [String] = []
            var arguments: StatementArguments = []
            if !includeEmpty { clauses.append("last_message IS NOT NULL") }
            if let customTypes {
                let values = customTypes.sorted()
                clauses.append("custom_type IN (" + values.map { _ in "?" }.joined(separator: ",") + ")")
                arguments += StatementArguments(values)
            }
            var sql = "SELECT * FROM channel"
            if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
            switch order {
            case .latestLastMessage: sql += " ORDER BY last_activity_at DESC, channel_url"
            case .chronological: sql += " ORDER BY created_at DESC, channel_url"
            case .channelNameAlphabetical: sql += " ORDER BY name, channel_url"
            }
            if let limit { sql += " LIMIT \(limit) OFFSET \(offset)" }
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.channel(from:))
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

    /// Drops cached messages, chunks, channels and tokens in one transaction; keeps the outbox.
    func clearCache() throws {
        try write { db in
            try db.execute(sql: "DELETE FROM message; DELETE FROM chunk; DELETE FROM channel; DELETE FROM sync_token")
        }
    }
}
