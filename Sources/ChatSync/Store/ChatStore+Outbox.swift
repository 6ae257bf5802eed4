import GRDB

// MARK: - Outbox

extension ChatStore {
    private static let outboxColumns =
        "seq, origin, state, local_path, upload_progress, failure_code, failure_message, failure_retryable, "
        + "attempts, resend_attempts, failed_at, text_corrected, may_be_stored, \(MessageColumns.selectList)"
    private static let outboxFixedCount = 13

    /// Adds `entry` to the outbox and answers it with its sequence number.
    /// Throws ``SyncManagerError/Code/invalidParameter`` when its `reqId` is already there.
    func insertOutbox(_ entry: OutboxEntry) throws -> OutboxEntry {
        try write { db in try Self.insertOutbox(entry, in: db) }
    }

    /// The next number in the one sequence that messages and operations share, so that
    /// a lane's FIFO order holds across both tables.
    static let nextSeqSQL =
        "(SELECT MAX(IFNULL((SELECT MAX(seq) FROM outbox), 0), IFNULL((SELECT MAX(seq) FROM outbox_operation), 0)) + 1)"

    private static let insertOutboxSQL: String = {
        let columns = "seq, lane, " + outboxColumns.replacingOccurrences(of: "seq, ", with: "")
        let placeholders = Array(repeating: "?", count: outboxFixedCount + MessageColumns.count).joined(separator: ", ")
        return "INSERT INTO outbox (\(columns)) VALUES (\(nextSeqSQL), \(placeholders))"
    }()

    static func insertOutbox(_ entry: OutboxEntry, in db: Database) throws -> OutboxEntry {
        let statement = try db.cachedStatement(sql: insertOutboxSQL).sqliteStatement
        do {
            try StatementBinder.execute(statement, in: db) { bindMutableColumns(of: entry, to: &$0) }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw SyncManagerError(.invalidParameter, "a message with reqId '\(entry.reqId)' is already in the outbox")
        }
        var stored = entry
        stored.seq = db.lastInsertedRowID
        return stored
    }

    /// Writes every field of an entry already in the outbox; answers whether it was there.
    @discardableResult
    func updateOutbox(_ entry: OutboxEntry) throws -> Bool {
        try write { db in try Self.updateOutbox(entry, in: db) }
    }

    private static let updateOutboxSQL: String = {
        let assignments =
            ([
                "origin", "state", "local_path", "upload_progress", "failure_code", "failure_message",
                "failure_retryable", "attempts", "resend_attempts", "failed_at", "text_corrected", "may_be_stored",
            ]
            + MessageColumns.names).map { "\($0) = ?" }.joined(separator: ", ")
        return "UPDATE outbox SET lane = ?, \(assignments) WHERE req_id = ?"
    }()

    static func updateOutbox(_ entry: OutboxEntry, in db: Database) throws -> Bool {
        let statement = try db.cachedStatement(sql: updateOutboxSQL).sqliteStatement
        try StatementBinder.execute(statement, in: db) { binder in
            bindMutableColumns(of: entry, to: &binder)
            binder.text(entry.reqId)
        }
        return db.changesCount > 0
    }

    /// Removes an entry; answers whether it was there.
    @discardableResult
    func deleteOutbox(reqId: String) throws -> Bool {
        try write { db in try Self.deleteOutbox(reqId: reqId, in: db) }
    }

    static func deleteOutbox(reqId: String, in db: Database) throws -> Bool {
        try db.cachedStatement(sql: "DELETE FROM outbox WHERE req_id = ?").execute(arguments: [reqId])
        return db.changesCount > 0
    }

    /// The entry with `reqId`, if any.
    func outboxEntry(reqId: String) throws -> OutboxEntry? {
        try read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.outboxColumns) FROM outbox WHERE req_id = ?")
            return try StatementBinder.firstRow(statement.sqliteStatement, in: db) {
                $0.text(reqId)
            } read: {
                Self.entry(from: $0)
            }
        }
    }

    /// Outbox entries in creation order, optionally narrowed to a channel, a lane and states.
    func outboxEntries(channelURL: String? = nil, lane: SendLane? = nil, states: Set<SyncState>? = nil) throws -> [OutboxEntry] {
        let (whereClause, values) = Self.outboxFilter(channelURL: channelURL, lane: lane, states: states)
        return try outboxEntries(where: whereClause, values)
    }

    /// The entries a channel's failed list shows, in creation order: failed, or failed
    /// and being resent (`OutboxEntry.isInFailedList`), not the channel's whole outbox,
    /// which after a long time offline holds thousands of pending rows.
    func failedListEntries(channelURL: String) throws -> [OutboxEntry] {
        try outboxEntries(
            where: " WHERE channel_url = ? AND (state = ? OR failed_at IS NOT NULL)", [channelURL, SyncState.failed.rawValue])
    }

    private func outboxEntries(where whereClause: String, _ values: [String]) throws -> [OutboxEntry] {
        try read { db in
            let statement = try db.cachedStatement(sql: "SELECT \(Self.outboxColumns) FROM outbox\(whereClause) ORDER BY seq")
            var entries: [OutboxEntry] = []
            // Read through SQLite's C API: a relaunch scans and settles thousands of rows.
            try StatementBinder.eachRow(statement.sqliteStatement, in: db) { binder in
                for value in values { binder.text(value) }
            } read: {
                entries.append(Self.entry(from: $0))
            }
            return entries
        }
    }

    /// The oldest entry of a lane in one of `states` that the outbox itself sends (not a
    /// host's): the lane's head. One indexed row, however long the lane is.
    func laneHead(channelURL: String, lane: SendLane, states: Set<SyncState>) throws -> OutboxEntry? {
        try read { db in
            var (whereClause, values) = Self.outboxFilter(channelURL: channelURL, lane: lane, states: states)
            whereClause += " AND origin = ?"
            values.append(OutboxEntry.Origin.outbox.rawValue)
            let statement = try db.cachedStatement(sql: "SELECT \(Self.outboxColumns) FROM outbox\(whereClause) ORDER BY seq LIMIT 1")
            return try StatementBinder.firstRow(statement.sqliteStatement, in: db) { binder in
                for value in values { binder.text(value) }
            } read: {
                Self.entry(from: $0)
            }
        }
    }

    /// The `WHERE` clause (empty, or with a leading space) and the text values of its
    /// parameters for outbox rows narrowed to a channel, a lane and states.
    private static func outboxFilter(
        channelURL: String?, lane: SendLane?, states: Set<SyncState>?
    ) -> (clause: String, values: [String]) {
        var clauses: [String] = []
        var values: [String] = []
        if let channelURL { clauses.append("channel_url = ?"); values.append(channelURL) }
        if let lane { clauses.append("lane = ?"); values.append(lane.rawValue) }
        if let states {
            let states = states.map(\.rawValue).sorted()
            clauses.append("state IN (" + states.map { _ in "?" }.joined(separator: ",") + ")")
            values += states
        }
        return (clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND "), values)
    }

    /// Per channel: how many messages are in the failed list, and since when the oldest.
    func failedListStats(channelURL: String? = nil) throws -> [(channelURL: String, count: Int, oldestFailedAt: Int64)] {
        try read { db in
            // Failed at rest only: a resend in flight is neither counted nor removed for a limit.
            var sql = "SELECT channel_url, COUNT(*), MIN(failed_at) FROM outbox WHERE failed_at IS NOT NULL AND state = ?"
            var arguments: StatementArguments = [SyncState.failed.rawValue]
            if let channelURL {
                sql += " AND channel_url = ?"
                arguments += [channelURL]
            }
            sql += " GROUP BY channel_url"
            return try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments).map { ($0[0], $0[1], $0[2]) }
        }
    }

    /// Moves an entry to the end of its lane (a new, highest sequence number).
    func moveOutboxToLaneTail(reqId: String) throws {
        try write { db in
            try db.execute(
                sql: "UPDATE outbox SET seq = \(Self.nextSeqSQL) WHERE req_id = ?",
                arguments: [reqId])
        }
    }

    // MARK: Row mapping

    /// Binds `lane`, then every column after `seq` in ``outboxColumns`` order, through
    /// SQLite's C API: a send's hot path, where an array of existential arguments cost
    /// more than the insert itself.
    private static func bindMutableColumns(of entry: OutboxEntry, to binder: inout StatementBinder) {
        let message = entry.message
        binder.text(entry.lane.rawValue)
        binder.text(entry.origin.rawValue)
        binder.text(message.syncState.rawValue)
        binder.text(message.file?.localPath)
        binder.double(message.uploadProgress)
        binder.int(message.failure.map { Int64($0.code) })
        binder.text(message.failure?.message)
        binder.bool(message.failure?.isRetryable)
        binder.int(entry.attempts)
        binder.int(entry.resendAttempts)
        binder.int(entry.failedAt)
        binder.bool(entry.textCorrected)
        binder.bool(entry.mayBeStored)
        MessageColumns.bind(message, to: &binder)
    }

    private static func entry(from row: ColumnReader) -> OutboxEntry {
        let state = row.text(2).flatMap(SyncState.init(rawValue:)) ?? .failed
        var message = MessageColumns.message(from: row, at: outboxFixedCount, state: state)
        if let localPath = row.text(3) {
            if message.file == nil { message.file = FileInfo(name: "", mimeType: "", size: 0) }
            message.file?.localPath = localPath
        }
        message.uploadProgress = row.double(4)
        if let code = row.int(5) {
            message.failure = SyncFailure(code: Int(code), message: row.text(6) ?? "", isRetryable: row.bool(7) ?? false)
        }
        return OutboxEntry(
            message: message, seq: row.int(0) ?? 0, origin: row.text(1).flatMap(OutboxEntry.Origin.init(rawValue:)) ?? .outbox,
            attempts: Int(row.int(8) ?? 0), resendAttempts: Int(row.int(9) ?? 0), failedAt: row.int(10),
            textCorrected: row.bool(11) ?? false, mayBeStored: row.bool(12) ?? false)
    }
}
