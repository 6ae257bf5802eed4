import GRDB

/// The cache's tables, created and upgraded by a `DatabaseMigrator`.
///
/// `message` is clustered by `(channel_url, created_at, message_id)` so a page is
/// one contiguous range read of the table itself; a unique index on
/// `(channel_url, message_id)` finds a message by id.
enum StoreSchema {
    /// The schema this library writes. A database with a higher number was written
    /// by a newer ChatSync and is refused rather than damaged.
    static let version = 5

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE metadata (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        user_id TEXT NOT NULL,
                        schema_version INTEGER NOT NULL
                    );
                    CREATE TABLE message (
                        channel_url TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        message_id INTEGER NOT NULL,
                        \(MessageColumns.payloadDefinitions),
                        PRIMARY KEY (channel_url, created_at, message_id)
                    ) WITHOUT ROWID;
                    CREATE UNIQUE INDEX message_by_id ON message(channel_url, message_id);
                    CREATE INDEX message_by_req_id ON message(req_id) WHERE req_id != '';
                    CREATE TABLE chunk (
                        id INTEGER PRIMARY KEY,
                        channel_url TEXT NOT NULL,
                        start_at INTEGER NOT NULL,
                        start_id INTEGER NOT NULL,
                        end_at INTEGER NOT NULL,
                        end_id INTEGER NOT NULL
                    );
                    CREATE INDEX chunk_by_channel ON chunk(channel_url, start_at, start_id);
                    CREATE TABLE outbox (
                        seq INTEGER PRIMARY KEY,
                        channel_url TEXT NOT NULL,
                        lane TEXT NOT NULL,
                        state TEXT NOT NULL,
                        message_id INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        \(MessageColumns.payloadDefinitions),
                        local_path TEXT,
                        upload_progress REAL,
                        failure_code INTEGER,
                        failure_message TEXT,
                        failure_retryable INTEGER,
                        attempts INTEGER NOT NULL DEFAULT 0,
                        resend_attempts INTEGER NOT NULL DEFAULT 0,
                            failed_at INTEGER,
                        origin TEXT NOT NULL
                    );
                    CREATE UNIQUE INDEX outbox_by_req_id ON outbox(req_id);
                    CREATE INDEX outbox_by_lane ON outbox(channel_url, lane, seq);
                    CREATE TABLE channel (
                        channel_url TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL,
                        custom_type TEXT NOT NULL,
                        data TEXT NOT NULL,
                        member_ids TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        last_message TEXT,
                        last_activity_at INTEGER NOT NULL,
                        is_frozen INTEGER NOT NULL
                    );
                    CREATE TABLE sync_token (
                        scope TEXT PRIMARY KEY NOT NULL,
                        token TEXT NOT NULL
                    );
                    """)
        }
        // Edits and deletions wait in the outbox too (Guarantees: Edits and deletions). They
        // share the outbox's sequence, so a channel's text lane keeps one FIFO order.
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE outbox_operation (
                        seq INTEGER PRIMARY KEY,
                        operation_id TEXT NOT NULL UNIQUE,
                        kind TEXT NOT NULL,
                        channel_url TEXT NOT NULL,
                        message_id INTEGER NOT NULL,
                        text TEXT,
                        attempts INTEGER NOT NULL DEFAULT 0
                    );
                    ALTER TABLE outbox ADD COLUMN text_corrected INTEGER NOT NULL DEFAULT 0;
                    UPDATE metadata SET schema_version = 2;
                    """)
        }
        // A bounded cache evicts the channels viewed least lately first; channel lists page
        // in SQL, one index per order, so a page reads only its own rows.
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    CREATE TABLE channel_use (
                        channel_url TEXT PRIMARY KEY NOT NULL,
                        viewed_seq INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX channel_use_by_seq ON channel_use(viewed_seq);
                    CREATE INDEX channel_by_activity ON channel(last_activity_at DESC, channel_url);
                    CREATE INDEX channel_by_creation ON channel(created_at DESC, channel_url);
                    CREATE INDEX channel_by_name ON channel(name, channel_url);
                    UPDATE metadata SET schema_version = 3;
                    """)
        }
        // Whether a send request for a waiting message went out: the service may then hold
        // it, and it can no longer be cancelled (API §4.6), also after a relaunch.
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: """
                    ALTER TABLE outbox ADD COLUMN may_be_stored INTEGER NOT NULL DEFAULT 0;
                    UPDATE metadata SET schema_version = 4;
                    """)
        }
        // The messages of this device that synced lately, so that `message(reqId:)` knows
        // them after a relaunch although no cached range holds them (an answer whose echo
        // had not come, a channel never viewed, a history evicted or dropped since).
        migrator.registerMigration("v5") { db in
            try db.execute(
                sql: """
                    CREATE TABLE synced_lately (
                        number INTEGER PRIMARY KEY,
                        channel_url TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        message_id INTEGER NOT NULL,
                        \(MessageColumns.payloadDefinitions)
                    );
                    CREATE UNIQUE INDEX synced_lately_by_req_id ON synced_lately(req_id);
                    CREATE INDEX synced_lately_by_id ON synced_lately(channel_url, message_id);
                    UPDATE metadata SET schema_version = 5;
                    """)
        }
        return migrator
    }
}
