import GRDB

// MARK: - Messages of this device that synced lately (`message(reqId:)` across relaunches)

extension ChatStore {
    /// How many are kept: as many as ``RecentlySynced`` holds in memory.
    static let syncedLatelyCapacity = RecentlySynced.capacity

    private static let rememberSQL =
        "INSERT OR REPLACE INTO synced_lately (\(MessageColumns.selectList)) VALUES (\(MessageColumns.placeholders))"
    /// What an edit may change (``MessageColumns/bindContent(of:to:)``); the request id stays.
    private static let refreshSQL =
        "UPDATE synced_lately SET " + MessageColumns.names.dropFirst(4).map { "\($0) = ?" }.joined(separator: ", ")
        + " WHERE channel_url = ? AND message_id = ? AND updated_at <= ?"

    /// An outbox entry leaves because the service stored its message, which is
    /// remembered (unless `synced` is `nil`) in the same transaction: a kill cannot leave
    /// the message in neither table. `forgetting` is the copy the memory's record lets go
    /// to make room (``RecentlySynced/forgottenByRemembering(_:)``): the file holds
    /// exactly what memory holds, so it never answers, after a relaunch, a copy whose
    /// later edits and deletions nobody followed.
    func retireOutbox(reqId: String, remembering synced: Message?, forgetting oldest: String? = nil) throws {
        try write { db in
            _ = try Self.deleteOutbox(reqId: reqId, in: db)
            guard let synced else { return }
            let statement = try db.cachedStatement(sql: Self.rememberSQL).sqliteStatement
            try StatementBinder.execute(statement, in: db) { MessageColumns.bind(synced, to: &$0) }
            if let oldest {
                try db.cachedStatement(sql: "DELETE FROM synced_lately WHERE req_id = ?").execute(arguments: [oldest])
            }
        }
    }

    /// The service deleted these messages: they are no longer remembered.
    func forgetSyncedLately(channelURL: String, messageIds: some Sequence<Int64>) throws {
        try write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM synced_lately WHERE channel_url = ? AND message_id = ?")
            for messageId in messageIds { try statement.execute(arguments: [channelURL, messageId]) }
        }
    }

    /// A newer version of a remembered message replaces its copy; its request id stays.
    func refreshSyncedLately(_ message: Message) throws {
        try write { db in
            // Through SQLite's C API: GRDB binds text only up to its first NUL.
            try StatementBinder.execute(db.cachedStatement(sql: Self.refreshSQL).sqliteStatement, in: db) { binder in
                MessageColumns.bindContent(of: message, to: &binder)
                binder.text(message.channelURL)
                binder.int(message.messageId)
                binder.int(message.updatedAt)
            }
        }
    }

    /// The newest ``syncedLatelyCapacity`` remembered messages, oldest first; older rows
    /// (a file an earlier version trimmed less tightly) go, so that the file holds what
    /// the memory's record is about to hold.
    func restoreSyncedLately() throws -> [Message] {
        try write { db in
            try db.execute(
                sql: """
                    DELETE FROM synced_lately WHERE number NOT IN
                        (SELECT number FROM synced_lately ORDER BY number DESC LIMIT ?)
                    """, arguments: [Self.syncedLatelyCapacity])
            var messages: [Message] = []
            let statement = try db.cachedStatement(
                sql: "SELECT \(MessageColumns.selectList) FROM synced_lately ORDER BY number"
            ).sqliteStatement
            try StatementBinder.eachRow(statement, in: db, binding: { _ in }) { messages.append(MessageColumns.message(from: $0)) }
            return messages
        }
    }
}
