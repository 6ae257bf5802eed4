import GRDB

/// Which way a page query reads from its anchor.
enum PageDirection: Sendable {
    /// Keys below the anchor, newest first up to the limit.
    case older
    /// Keys above the anchor, oldest first up to the limit.
    case newer
}

// MARK: - Succeeded messages

extension ChatStore {
    /// Inserts, or updates the stored row, but never with an older version: a page
    /// fetched before an edit arrived must not undo the edit.
    private static let upsertSQL =
        "INSERT INTO message (\(MessageColumns.selectList)) VALUES (\(MessageColumns.placeholders)) "
        + "ON CONFLICT DO UPDATE SET "
        + MessageColumns.names.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        + " WHERE excluded.updated_at >= message.updated_at"

    /// Inserts or updates `messages` in one transaction (older versions never win).
    func upsertMessages(_ messages: [Message]) throws {
        guard !messages.isEmpty else { return }
        _ = try write { db in try Self.upsertMessages(messages, in: db) }
    }

    /// Inserts or updates `messages` inside the caller's transaction, with one cached statement.
    /// Answers whether every message was written: `false` when a stored copy was newer and stayed.
    @discardableResult
    static func upsertMessages(_ messages: [Message], in db: Database) throws -> Bool {
        let statement = try db.cachedStatement(sql: upsertSQL).sqliteStatement
        var wroteEvery = true
        for message in messages {
            try StatementBinder.execute(statement, in: db) { MessageColumns.bind(message, to: &$0) }
            // An insert or an update changes one row; an update its `WHERE` refused, none.
            if db.changesCount == 0 { wroteEvery = false }
        }
        return wroteEvery
    }

    /// Removes one message by id; answers whether it was cached.
    @discardableResult
    func deleteMessage(channelURL: String, messageId: Int64) throws -> Bool {
        try write { db in try Self.deleteMessage(channelURL: channelURL, messageId: messageId, in: db) }
    }

    static func deleteMessage(channelURL: String, messageId: Int64, in db: Database) throws -> Bool {
        let statement = try db.cachedStatement(sql: "DELETE FROM message WHERE channel_url = ? AND message_id = ?")
        try statement.execute(arguments: [channelURL, messageId])
        return db.changesCount > 0
    }

    /// The cached message with `messageId`, if any.
    func message(channelURL: String, messageId: Int64) throws -> Message? {
        try read { db in try Self.message(channelURL: channelURL, messageId: messageId, in: db) }
    }

    static func message(channelURL: String, messageId: Int64, in db: Database) throws -> Message? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(MessageColumns.selectList) FROM message WHERE channel_url = ? AND message_id = ?")
        return try StatementBinder.firstRow(statement.sqliteStatement, in: db) { binder in
            binder.text(channelURL)
            binder.int(messageId)
        } read: {
            MessageColumns.message(from: $0)
        }
    }

    /// When the cached message with `messageId` was created, if the cache holds it: a
    /// one-column read for checks that need no more (applying change logs).
    static func createdAt(channelURL: String, messageId: Int64, in db: Database) throws -> Int64? {
        let statement = try db.cachedStatement(sql: "SELECT created_at FROM message WHERE channel_url = ? AND message_id = ?")
        return try Int64.fetchOne(statement, arguments: [channelURL, messageId])
    }

    /// The cached synced message sent with `reqId`, if any.
    func message(reqId: String) throws -> Message? {
        guard !reqId.isEmpty else { return nil }
        return try read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT \(MessageColumns.selectList) FROM message WHERE req_id = ? LIMIT 1")
            return try StatementBinder.firstRow(statement.sqliteStatement, in: db) {
                $0.text(reqId)
            } read: {
                MessageColumns.message(from: $0)
            }
        }
    }

    /// One page of cached messages, answered ascending by `(createdAt, messageId)`.
    ///
    /// - Parameters:
    ///   - anchor: where the page starts; `inclusive` includes a message exactly there.
    ///   - bound: the far end a page may reach (inclusive), such as a chunk edge.
    ///   - filter: applied in SQL, so `limit` counts matching messages.
    func page(
        channelURL: String, direction: PageDirection, from anchor: MessageKey, inclusive: Bool,
        bound: MessageKey? = nil, limit: Int, filter: MessageFilter = .init()
    ) throws -> [Message] {
        try read { db in
            try Self.page(
                channelURL: channelURL, direction: direction, from: anchor, inclusive: inclusive,
                bound: bound, limit: limit, filter: filter, in: db)
        }
    }

    static func page(
        channelURL: String, direction: PageDirection, from anchor: MessageKey, inclusive: Bool,
        bound: MessageKey?, limit: Int, filter: MessageFilter, in db: Database
    ) throws -> [Message] {
        guard limit > 0 else { return [] }
        let older = direction == .older
        let shape = PageShape(older: older, inclusive: inclusive, bounded: bound != nil)
        var filterValues: [String] = []
        let sql = filter.isEmpty ? unfilteredPageSQL[shape.index] : pageSQL(shape, filter: filter, values: &filterValues)
        var messages: [Message] = []
        messages.reserveCapacity(min(limit, 1024))
        // Bound and read through SQLite's C API: a page is the hot path of every fetch,
        // scroll and ingest, and GRDB's rows and argument arrays cost more than the query.
        try StatementBinder.eachRow(db.cachedStatement(sql: sql).sqliteStatement, in: db) { binder in
            binder.text(channelURL)
            binder.int(anchor.createdAt)
            binder.int(anchor.messageId)
            if let bound {
                binder.int(bound.createdAt)
                binder.int(bound.messageId)
            }
            for value in filterValues { binder.text(value) }
            binder.int(limit)
        } read: { row in
            messages.append(MessageColumns.message(from: row))
        }
        if older { messages.reverse() }
        return messages
    }

    /// The newest cached message of a channel.
    func newestMessage(channelURL: String) throws -> Message? {
        try page(channelURL: channelURL, direction: .older, from: .max, inclusive: true, limit: 1).last
    }

    /// What the SQL of a page depends on, besides its filter.
    private struct PageShape {
        var older: Bool
        var inclusive: Bool
        var bounded: Bool
        var index: Int { (older ? 4 : 0) + (inclusive ? 2 : 0) + (bounded ? 1 : 0) }
        static let all = (0..<8).map { PageShape(older: $0 & 4 != 0, inclusive: $0 & 2 != 0, bounded: $0 & 1 != 0) }
    }

    /// The SQL of every unfiltered page, by ``PageShape/index``: built once rather than
    /// on each page (the statement cache then finds it by a string it has hashed before).
    private static let unfilteredPageSQL: [String] = PageShape.all.map { shape in
        var values: [String] = []
        return pageSQL(shape, filter: MessageFilter(), values: &values)
    }

    private static func pageSQL(_ shape: PageShape, filter: MessageFilter, values: inout [String]) -> String {
        let anchorOp = shape.older ? (shape.inclusive ? "<=" : "<") : (shape.inclusive ? ">=" : ">")
        let boundOp = shape.older ? ">=" : "<="
        var sql = "SELECT \(MessageColumns.selectList) FROM message WHERE channel_url = ? AND (created_at, message_id) \(anchorOp) (?, ?)"
        if shape.bounded { sql += " AND (created_at, message_id) \(boundOp) (?, ?)" }
        values = appendFilter(filter, to: &sql)
        sql += shape.older ? " ORDER BY created_at DESC, message_id DESC" : " ORDER BY created_at, message_id"
        return sql + " LIMIT ?"
    }

    /// Adds `filter`'s conditions to `sql`; answers the values to bind, in order.
    static func appendFilter(_ filter: MessageFilter, to sql: inout String) -> [String] {
        var values: [String] = []
        func inList(_ column: String, _ listed: [String]) {
            sql += " AND \(column) IN (" + Array(repeating: "?", count: listed.count).joined(separator: ",") + ")"
            values += listed
        }
        // Sorted so that equal filters share one cached statement and one argument order.
        if let kinds = filter.kinds { inList("kind", kinds.map(\.rawValue).sorted()) }
        if let customTypes = filter.customTypes { inList("custom_type", customTypes.sorted()) }
        if let senderIds = filter.senderIds { inList("sender_id", senderIds.sorted()) }
        return values
    }
}
