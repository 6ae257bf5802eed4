import GRDB

// MARK: - What a send checks in the cache

extension ChatStore {
    /// What a new message needs from the cache before it enters the outbox.
    struct SendCheck {
        /// `false` only when the channel is cached with a member list that lacks the user.
        let isMember: Bool
        /// The creation time of the channel's newest cached message: a new message is
        /// never dated before it.
        let newestCreatedAt: Int64?
    }

    /// Both answers in one cached statement, the member list searched by SQLite itself: a
    /// send is a hot path, and decoding the list's JSON in Swift cost more than the
    /// insert. A list that is not a JSON array of strings counts as no list, as it did
    /// when it was decoded here.
    private static let sendCheckSQL = """
        SELECT
          (SELECT CASE
             WHEN json_valid(member_ids) = 0 OR json_type(member_ids) != 'array' THEN 1
             WHEN EXISTS (SELECT 1 FROM json_each(member_ids) WHERE type != 'text') THEN 1
             WHEN json_array_length(member_ids) = 0 THEN 1
             ELSE EXISTS (SELECT 1 FROM json_each(member_ids) WHERE value = ?2)
           END FROM channel WHERE channel_url = ?1),
          (SELECT created_at FROM message WHERE channel_url = ?1 ORDER BY created_at DESC, message_id DESC LIMIT 1)
        """

    /// Read through SQLite's C API: GRDB's row and named arguments cost more than the query.
    static func sendCheck(channelURL: String, userId: String, in db: Database) throws -> SendCheck {
        let statement = try db.cachedStatement(sql: sendCheckSQL).sqliteStatement
        let answer = try StatementBinder.firstRow(statement, in: db) { binder in
            binder.text(channelURL)
            binder.text(userId)
        } read: { row in
            SendCheck(isMember: row.int(0).map { $0 != 0 } ?? true, newestCreatedAt: row.int(1))
        }
        // The statement always answers one row; none would mean no channel and no message.
        return answer ?? SendCheck(isMember: true, newestCreatedAt: nil)
    }

    /// The creation time of the channel's newest outbox entry, if it has any: read once per
    /// channel and run, when the engine does not know it yet (an earlier run's entries).
    static func newestOutboxCreatedAt(channelURL: String, in db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT MAX(created_at) FROM outbox WHERE channel_url = ?"), arguments: [channelURL])
    }
}
