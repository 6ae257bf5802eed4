import ChatSync
import Foundation
import GRDB

/// The reference server's storage: users, channels, members, messages, change logs and
/// uploaded files in one SQLite file. Every method is one transaction.
final class ServerDatabase: Sendable {
    let writer: any DatabaseWriter

    init(path: String?) throws {
        writer = try path.map { try DatabasePool(path: $0) } ?? DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE user (id TEXT PRIMARY KEY NOT NULL, token TEXT NOT NULL UNIQUE);
                    CREATE TABLE channel (
                        url TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, custom_type TEXT NOT NULL, data TEXT NOT NULL,
                        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, is_frozen INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE member (channel_url TEXT NOT NULL REFERENCES channel(url) ON DELETE CASCADE,
                        user_id TEXT NOT NULL, PRIMARY KEY (channel_url, user_id));
                    CREATE TABLE message (
                        message_id INTEGER PRIMARY KEY AUTOINCREMENT, channel_url TEXT NOT NULL, req_id TEXT NOT NULL,
                        sender_id TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, custom_type TEXT NOT NULL,
                        data TEXT NOT NULL, file TEXT, parent_message_id INTEGER, created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL, deleted INTEGER NOT NULL DEFAULT 0);
                    CREATE INDEX message_by_time ON message(channel_url, created_at, message_id);
                    CREATE UNIQUE INDEX message_by_req_id ON message(channel_url, req_id) WHERE req_id != '';
                    CREATE TABLE change_log (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT, channel_url TEXT NOT NULL, message_id INTEGER, users TEXT);
                    CREATE TABLE file (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, mime_type TEXT NOT NULL,
                        bytes BLOB NOT NULL);
                    CREATE TABLE clock (id INTEGER PRIMARY KEY CHECK (id = 1), last INTEGER NOT NULL);
                    INSERT INTO clock VALUES (1, 0);
                    """)
        }
        // Edits and deletions keyed by the client's operation id, so a repeat is applied once.
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE operation (id TEXT PRIMARY KEY NOT NULL, message_id INTEGER NOT NULL,
                        requests INTEGER NOT NULL DEFAULT 1);
                    """)
        }
        try migrator.migrate(writer)
    }

    // MARK: - Time

    /// Wall time in milliseconds, never earlier than the last time handed out.
    private static func tick(_ db: Database) throws -> Int64 {
        let wall = Int64(Date().timeIntervalSince1970 * 1000)
        let last = try Int64.fetchOne(db, sql: "SELECT last FROM clock WHERE id = 1") ?? 0
        let now = max(wall, last)
        try db.execute(sql: "UPDATE clock SET last = ? WHERE id = 1", arguments: [now])
        return now
    }

    private static func lastChange(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT IFNULL(MAX(seq), 0) FROM change_log") ?? 0
    }

    private static func logChannel(_ db: Database, _ url: String, users: [String]) throws {
        try db.execute(
            sql: "INSERT INTO change_log (channel_url, users) VALUES (?, ?)",
            arguments: [url, users.distinctUsers().joined(separator: "\n")])
    }

    // MARK: - Users

    func addUser(_ id: String, token: String) throws {
        try writer.write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO user (id, token) VALUES (?, ?)", arguments: [id, token])
        }
    }

    func user(forToken token: String) throws -> String? {
        try writer.read { db in try String.fetchOne(db, sql: "SELECT id FROM user WHERE token = ?", arguments: [token]) }
    }

    // MARK: - Channels

    private static func members(_ db: Database, _ url: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT user_id FROM member WHERE channel_url = ? ORDER BY rowid", arguments: [url])
    }

    private static func channel(_ db: Database, _ url: String) throws -> Channel? {
        guard let row = try Row.fetchOne(db, sql: "SELECT * FROM channel WHERE url = ?", arguments: [url]) else { return nil }
        let last = try Row.fetchOne(
            db, sql: "SELECT * FROM message WHERE channel_url = ? AND deleted = 0 ORDER BY created_at DESC, message_id DESC LIMIT 1",
            arguments: [url]
        ).map(message(from:))
        return Channel(
            channelURL: row["url"], name: row["name"], customType: row["custom_type"], data: row["data"],
            memberIds: try members(db, url), createdAt: row["created_at"], updatedAt: row["updated_at"],
            lastMessage: last, isFrozen: row["is_frozen"])
    }

    func channel(_ url: String) throws -> Channel? { try writer.read { try Self.channel($0, url) } }

    /// The channel, after checking that it exists and that `user` is a member.
    private static func memberChannel(_ db: Database, _ url: String, _ user: String) throws -> Channel {
        guard let channel = try channel(db, url) else { throw ServerError.notFound("no channel \(url)") }
        guard channel.hasMember(user) else { throw ServerError.forbidden("\(user) is not a member of \(url)") }
        return channel
    }

    func createChannel(_ url: String, name: String, customType: String, members: [String]) throws -> Channel {
        try writer.write { db in
            guard !url.isEmpty else { throw ServerError.badRequest("channelURL is empty") }
            guard try Self.channel(db, url) == nil else { throw ServerError.badRequest("channel \(url) exists") }
            let now = try Self.tick(db)
            try db.execute(
                sql: "INSERT INTO channel (url, name, custom_type, data, created_at, updated_at) VALUES (?, ?, ?, '', ?, ?)",
                arguments: [url, name, customType, now, now])
            for member in members {
                try db.execute(sql: "INSERT OR IGNORE INTO member (channel_url, user_id) VALUES (?, ?)", arguments: [url, member])
            }
            try Self.logChannel(db, url, users: members)
            return try Self.channel(db, url)!
        }
    }

    func channelPage(_ query: ChannelPageQuery, for user: String) throws -> ChannelPage {
        guard (1...100).contains(query.limit) else { throw ServerError.badRequest("limit must be in 1...100") }
        return try writer.read { db in
            let urls = try String.fetchAll(db, sql: "SELECT channel_url FROM member WHERE user_id = ?", arguments: [user])
            var channels = try urls.compactMap { try Self.channel(db, $0) }.filter(query.matches)
            channels.sort { query.order.sortsBefore($0, $1) }
            if let cursor = query.cursor {
                guard let after = ChannelCursor(encoded: cursor)?.channel else { throw ServerError.badRequest("bad cursor") }
                channels.removeAll { !query.order.sortsBefore(after, $0) }
            }
            let page = Array(channels.prefix(query.limit))
            let next = channels.count > page.count ? page.last.map { ChannelCursor(query.order, $0).encoded } : nil
            return ChannelPage(channels: page, nextCursor: next)
        }
    }

    func channelChangeLogs(token: String?, limit: Int, for user: String) throws -> ChannelChangeLogs {
        try writer.read { db in
            let newest = try Self.lastChange(db)
            guard let token else { return ChannelChangeLogs(updated: [], deletedChannelURLs: [], token: String(newest), hasMore: false) }
            guard let since = Int64(token), (0...newest).contains(since) else { throw ServerError.badRequest("unknown token") }
            let rows = try Row.fetchAll(
                db, sql: "SELECT seq, channel_url, users FROM change_log WHERE seq > ? AND users IS NOT NULL ORDER BY seq",
                arguments: [since])
            var urls: [String] = []
            var last = since
            var hasMore = false
            for row in rows
            where (row["users"] as String? ?? "").split(separator: "\n").contains(where: { $0.utf8.elementsEqual(user.utf8) }) {
                let url: String = row["channel_url"]
                if !urls.contains(url) {
                    if urls.count == max(1, limit) { hasMore = true; break }
                    urls.append(url)
                }
                last = row["seq"]
            }
            if !hasMore { last = newest }
            var updated: [Channel] = []
            var deleted: [String] = []
            for url in urls {
                if let channel = try Self.channel(db, url), channel.hasMember(user) {
                    updated.append(channel)
                } else {
                    deleted.append(url)
                }
            }
            return ChannelChangeLogs(updated: updated, deletedChannelURLs: deleted, token: String(last), hasMore: hasMore)
        }
    }

    // MARK: - Messages

    static func message(from row: Row) -> Message {
        let file = (row["file"] as String?).flatMap { try? JSONDecoder().decode(FileInfo.self, from: Data($0.utf8)) }
        return Message(
            messageId: row["message_id"], reqId: row["req_id"], channelURL: row["channel_url"], senderId: row["sender_id"],
            kind: MessageKind(rawValue: row["kind"]) ?? .text, text: row["text"], customType: row["custom_type"],
            data: row["data"], file: file, parentMessageId: row["parent_message_id"], createdAt: row["created_at"],
            updatedAt: row["updated_at"])
    }

    /// Stores a message, or answers the one stored before with the same `(channel, reqId)`.
    func send(_ request: SendMessageRequest, from user: String) throws -> (message: Message, isNew: Bool, members: [String]) {
        try writer.write { db in
            let channel = try Self.memberChannel(db, request.channelURL, user)
            if !request.reqId.isEmpty,
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM message WHERE channel_url = ? AND req_id = ?", arguments: [request.channelURL, request.reqId])
            {
                return (Self.message(from: row), false, channel.memberIds)
            }
            if channel.isFrozen { throw ServerError.frozen(request.channelURL) }
            guard request.text.count <= SendLimits.maxTextLength, request.data.utf8.count <= SendLimits.maxDataSize else {
                throw ServerError.tooLarge("the message is too large")
            }
            if request.kind.hasAttachment, request.file?.url == nil {
                throw ServerError.badRequest("a \(request.kind.rawValue) message needs an uploaded file")
            }
            var file = request.file
            file?.localPath = nil
            let fileJSON = try file.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
            let now = try Self.tick(db)
            try db.execute(
                sql: """
                    INSERT INTO message (channel_url, req_id, sender_id, kind, text, custom_type, data, file, parent_message_id,
                                         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    request.channelURL, request.reqId, user, request.kind.rawValue, request.text, request.customType,
                    request.data, fileJSON, request.parentMessageId, now, now,
                ])
            let id = db.lastInsertedRowID
            try Self.logChannel(db, request.channelURL, users: channel.memberIds)
            let row = try Row.fetchOne(db, sql: "SELECT * FROM message WHERE message_id = ?", arguments: [id])!
            return (Self.message(from: row), true, channel.memberIds)
        }
    }

    func fetch(_ query: MessageQuery, for user: String) throws -> MessagePage {
        guard query.prevLimit >= 0, query.nextLimit >= 0, query.prevLimit + query.nextLimit <= 1000 else {
            throw ServerError.badRequest("limits must be in 0...1000")
        }
        return try writer.read { db in
            _ = try Self.memberChannel(db, query.channelURL, user)
            var filterSQL = ""
            var filterArguments: StatementArguments = []
            if let filter = query.filter {
                for (column, values) in [
                    ("kind", filter.kinds.map { Set($0.map(\.rawValue)) }), ("custom_type", filter.customTypes),
                    ("sender_id", filter.senderIds),
                ] {
                    guard let values else { continue }
                    filterSQL += " AND \(column) IN (" + values.map { _ in "?" }.joined(separator: ",") + ")"
                    filterArguments += StatementArguments(values.sorted())
                }
            }
            let anchorId = query.anchorMessageId
            let previousOp = query.inclusive ? "<=" : "<"
            let nextOp = query.inclusive ? ">=" : ">"
            let previousCondition = anchorId == nil ? "created_at \(previousOp) ?" : "(created_at, message_id) \(previousOp) (?, ?)"
            let nextCondition = anchorId == nil ? "created_at \(nextOp) ?" : "(created_at, message_id) \(nextOp) (?, ?)"
            let anchorArguments: StatementArguments = anchorId.map { [query.timestamp, $0] } ?? [query.timestamp]
            let base = "SELECT * FROM message WHERE channel_url = ? AND deleted = 0"
            let previous = try Row.fetchAll(
                db, sql: "\(base) AND \(previousCondition)\(filterSQL) ORDER BY created_at DESC, message_id DESC LIMIT ?",
                arguments: [query.channelURL] + anchorArguments + filterArguments + [query.prevLimit + 1]
            ).map(Self.message(from:))
            let previousIds = Set(previous.prefix(query.prevLimit).map(\.messageId))
            let next = try Row.fetchAll(
                db, sql: "\(base) AND \(nextCondition)\(filterSQL) ORDER BY created_at, message_id LIMIT ?",
                arguments: [query.channelURL] + anchorArguments + filterArguments + [query.nextLimit + previousIds.count + 1]
            ).map(Self.message(from:)).filter { !previousIds.contains($0.messageId) }
            return MessagePage(
                messages: previous.prefix(query.prevLimit).reversed() + next.prefix(query.nextLimit),
                hasPrev: previous.count > query.prevLimit, hasNext: next.count > query.nextLimit)
        }
    }

    func changeLogs(channelURL: String, token: String?, limit: Int, for user: String) throws -> MessageChangeLogs {
        try writer.read { db in
            _ = try Self.memberChannel(db, channelURL, user)
            let newest = try Self.lastChange(db)
            guard let token else { return MessageChangeLogs(updated: [], deletedMessageIds: [], token: String(newest), hasMore: false) }
            guard let since = Int64(token), (0...newest).contains(since) else { throw ServerError.badRequest("unknown token") }
            let rows = try Row.fetchAll(
                db, sql: "SELECT seq, message_id FROM change_log WHERE seq > ? AND channel_url = ? AND message_id IS NOT NULL ORDER BY seq",
                arguments: [since, channelURL])
            var ids: [Int64] = []
            var last = since
            var hasMore = false
            for row in rows {
                let id: Int64 = row["message_id"]
                if !ids.contains(id) {
                    if ids.count == max(1, limit) { hasMore = true; break }
                    ids.append(id)
                }
                last = row["seq"]
            }
            if !hasMore { last = newest }
            var updated: [Message] = []
            var deleted: [Int64] = []
            for id in ids {
                let row = try Row.fetchOne(db, sql: "SELECT * FROM message WHERE message_id = ?", arguments: [id])
                if let row, !(row["deleted"] as Bool) { updated.append(Self.message(from: row)) } else { deleted.append(id) }
            }
            return MessageChangeLogs(updated: updated, deletedMessageIds: deleted, token: String(last), hasMore: hasMore)
        }
    }

    func lookUp(channelURL: String, reqIds: [String], for user: String) throws -> [Message] {
        guard reqIds.count <= 1000 else { throw ServerError.badRequest("at most 1000 reqIds") }
        return try writer.read { db in
            _ = try Self.memberChannel(db, channelURL, user)
            return try reqIds.compactMap { reqId in
                try Row.fetchOne(
                    db, sql: "SELECT * FROM message WHERE channel_url = ? AND req_id = ? AND deleted = 0",
                    arguments: [channelURL, reqId]
                ).map(Self.message(from:))
            }
        }
    }

    /// Edits (`text` set) or deletes (`nil`) a message; `user` nil acts as an administrator.
    /// Edits (`text`) or deletes (`nil`) a message. With an `operationId` already applied,
    /// changes nothing and answers the message as it is (`applied` is `false`).
    func change(
        channelURL: String, messageId: Int64, text: String?, by user: String?, operationId: String? = nil
    ) throws -> (Message, members: [String], applied: Bool) {
        try writer.write { db in
            let channel = try user.map { try Self.memberChannel(db, channelURL, $0) } ?? Self.channel(db, channelURL)
            guard let channel else { throw ServerError.notFound("no channel \(channelURL)") }
            if let operationId {
                try db.execute(sql: "UPDATE operation SET requests = requests + 1 WHERE id = ?", arguments: [operationId])
                if db.changesCount > 0 {
                    let row = try Row.fetchOne(
                        db, sql: "SELECT * FROM message WHERE channel_url = ? AND message_id = ?", arguments: [channelURL, messageId])
                    // A repeated deletion is done; a repeated edit of a message deleted since is not found.
                    guard let row, text == nil || row["deleted"] == 0 else {
                        throw ServerError.notFound("no message \(messageId) in \(channelURL)")
                    }
                    return (Self.message(from: row), channel.memberIds, false)
                }
            }
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM message WHERE channel_url = ? AND message_id = ? AND deleted = 0",
                    arguments: [channelURL, messageId])
            else { throw ServerError.notFound("no message \(messageId) in \(channelURL)") }
            var message = Self.message(from: row)
            if let user, !message.isSent(by: user) {
                throw ServerError.forbidden("\(user) may only change their own messages")
            }
            message.updatedAt = try Self.tick(db)
            if let text {
                message.text = text
                try db.execute(
                    sql: "UPDATE message SET text = ?, updated_at = ? WHERE message_id = ?",
                    arguments: [text, message.updatedAt, messageId])
            } else {
                try db.execute(
                    sql: "UPDATE message SET deleted = 1, updated_at = ? WHERE message_id = ?", arguments: [message.updatedAt, messageId])
            }
            try db.execute(sql: "INSERT INTO change_log (channel_url, message_id) VALUES (?, ?)", arguments: [channelURL, messageId])
            // A deletion may change the channel's last message; an edit of it changes its preview.
            if text == nil || channel.lastMessage?.messageId == messageId {
                try Self.logChannel(db, channelURL, users: channel.memberIds)
            }
            if let operationId {
                try db.execute(sql: "INSERT INTO operation (id, message_id) VALUES (?, ?)", arguments: [operationId, messageId])
            }
            return (message, channel.memberIds, true)
        }
    }

    /// The edits and deletions applied by operation id: the message each changed, and how
    /// many requests carried the id (repeats included).
    func operations() throws -> [AppliedOperation] {
        try writer.read { db in
            try Row.fetchAll(db, sql: "SELECT id, message_id, requests FROM operation ORDER BY rowid").map {
                AppliedOperation(id: $0["id"], messageId: $0["message_id"], requests: $0["requests"])
            }
        }
    }

    func messages(in channelURL: String) throws -> [Message] {
        try writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM message WHERE channel_url = ? AND deleted = 0 ORDER BY created_at, message_id",
                arguments: [channelURL]
            ).map(Self.message(from:))
        }
    }

    // MARK: - Files

    func storeFile(_ bytes: Data, name: String, mimeType: String, channelURL: String, for user: String) throws -> Int64 {
        try writer.write { db in
            _ = try Self.memberChannel(db, channelURL, user)
            try db.execute(sql: "INSERT INTO file (name, mime_type, bytes) VALUES (?, ?, ?)", arguments: [name, mimeType, bytes])
            return db.lastInsertedRowID
        }
    }

    func file(_ id: Int64) throws -> (name: String, mimeType: String, bytes: Data)? {
        try writer.read { db in
            try Row.fetchOne(db, sql: "SELECT name, mime_type, bytes FROM file WHERE id = ?", arguments: [id]).map { ($0[0], $0[1], $0[2]) }
        }
    }

    func close() { try? writer.close() }
}
