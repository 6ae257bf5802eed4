import GRDB

// MARK: - Outbox operations (edits and deletions)

extension ChatStore {
    /// Adds an operation at the end of the outbox's one sequence and answers its number.
    func insertOperation(_ operation: OutboxOperation) throws -> Int64 {
        try write { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO outbox_operation (seq, operation_id, kind, channel_url, message_id, text)
                    VALUES (\(Self.nextSeqSQL), ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                operation.id, operation.kind.rawValue, operation.channelURL, operation.messageId, operation.text,
            ])
            return db.lastInsertedRowID
        }
    }

    /// Removes operations by id (those already gone are skipped).
    func deleteOperations(ids: [String]) throws {
        guard !ids.isEmpty else { return }
        try write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM outbox_operation WHERE operation_id = ?")
            for id in ids { try statement.execute(arguments: [id]) }
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
            let rows = try Row.fetchAll(
                db, sql: "SELECT seq, operation_id, kind, channel_url, message_id, text, attempts FROM outbox_operation ORDER BY seq")
            return rows.compactMap { row in
                guard let kind = OutboxOperation.Kind(rawValue: row[2]) else { return nil }
                let operation = OutboxOperation(id: row[1], kind: kind, channelURL: row[3], messageId: row[4], text: row[5])
                return QueuedOperation(operation: operation, seq: row[0], attempts: row[6])
            }
        }
    }
}
