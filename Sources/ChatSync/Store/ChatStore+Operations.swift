import GRDB

// MARK: - Outbox operations (edits and deletions)

extension ChatStore {
    /// Adds an operation at the end of the outbox's one sequence and answers its number.
    func insertOperation(_ operation: OutboxOperation) throws -> Int64 {
        try write { db in
            // Through SQLite's C API, as messages are: GRDB binds and reads text up to its
            // first NUL, and an edit's text may hold one.
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO outbox_operation (seq, operation_id, kind, channel_url, message_id, text)
                    VALUES (\(Self.nextSeqSQL), ?, ?, ?, ?, ?)
                    """
            ).sqliteStatement
            try StatementBinder.execute(statement, in: db) { binder in
                binder.text(operation.id)
                binder.text(operation.kind.rawValue)
                binder.text(operation.channelURL)
                binder.int(operation.messageId)
                binder.text(operation.text)
            }
            return db.lastInsertedRowID
        }
    }

    /// Removes operations by id (those already gone are skipped).
    func deleteOperations(ids: [String]) throws {
        guard !ids.isEmpty else { return }
        try write { db in try Self.deleteOperations(ids: ids, in: db) }
    }

    static func deleteOperations(ids: [String], in db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM outbox_operation WHERE operation_id = ?")
        for id in ids { try statement.execute(arguments: [id]) }
    }

    /// An edit the service took leaves the outbox, and its answer replaces the cached
    /// copy (unless the cache holds a newer one), in one transaction: a kill between the
    /// two would leave the old text shown with no edit queued, and the user would edit
    /// again. Answers the copy to show.
    func landEdit(operationId: String, answer: Message) throws -> Message {
        try write { db in
            try Self.deleteOperations(ids: [operationId], in: db)
            guard let cached = try Self.message(channelURL: answer.channelURL, messageId: answer.messageId, in: db) else {
                return answer
            }
            if cached.updatedAt > answer.updatedAt { return cached }
            try Self.upsertMessages([answer], in: db)
            return answer
        }
    }

    /// A deletion the service took leaves the outbox with its message, in one transaction
    /// (a kill between the two would show the message again with no deletion queued).
    func landDeletion(operationId: String, channelURL: String, messageId: Int64) throws {
        try write { db in
            try Self.deleteOperations(ids: [operationId], in: db)
            _ = try Self.deleteMessage(channelURL: channelURL, messageId: messageId, in: db)
        }
    }

    /// Records the retries an operation has spent.
    func setOperationAttempts(id: String, attempts: Int) throws {
        try write { db in
            try db.cachedStatement(sql: "UPDATE outbox_operation SET attempts = ? WHERE operation_id = ?")
                .execute(arguments: [attempts, id])
        }
    }

    /// Every operation in the outbox, in sequence order. A row whose kind this version
    /// does not know is skipped rather than guessed at.
    func operations() throws -> [QueuedOperation] {
        try read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT seq, operation_id, kind, channel_url, message_id, text, attempts FROM outbox_operation ORDER BY seq"
            ).sqliteStatement
            var queued: [QueuedOperation] = []
            try StatementBinder.eachRow(statement, in: db, binding: { _ in }) { row in
                guard let kind = row.text(2).flatMap(OutboxOperation.Kind.init(rawValue:)) else { return }
                let operation = OutboxOperation(
                    id: row.text(1) ?? "", kind: kind, channelURL: row.text(3) ?? "", messageId: row.int(4) ?? 0, text: row.text(5))
                queued.append(QueuedOperation(operation: operation, seq: row.int(0) ?? 0, attempts: Int(row.int(6) ?? 0)))
            }
            return queued
        }
    }
}
