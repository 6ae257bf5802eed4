import GRDB
import GRDBSQLite

/// The message columns shared by the `message` and `outbox` tables, and the
/// hand-written mapping between them and ``Message`` that the hot paths use.
enum MessageColumns {
    /// Column definitions after `channel_url, created_at, message_id`.
    static let payloadDefinitions = """
        req_id TEXT NOT NULL,
        sender_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        custom_type TEXT NOT NULL,
        data TEXT NOT NULL,
        file_name TEXT,
        file_mime TEXT,
        file_size INTEGER,
        file_url TEXT,
        parent_message_id INTEGER,
        updated_at INTEGER NOT NULL
        """

    /// Every message column, in the order ``message(from:at:)`` reads them.
    static let names = [
        "channel_url", "created_at", "message_id", "req_id", "sender_id", "kind", "text", "custom_type",
        "data", "file_name", "file_mime", "file_size", "file_url", "parent_message_id", "updated_at",
    ]
    static let count = names.count
    static let selectList = names.joined(separator: ", ")
    static let placeholders = Array(repeating: "?", count: count).joined(separator: ", ")

    /// The values of `message` in ``names`` order.
    static func values(of message: Message) -> [(any DatabaseValueConvertible)?] {
        [
            message.channelURL, message.createdAt, message.messageId, message.reqId, message.senderId,
            message.kind.rawValue, message.text, message.customType, message.data,
            message.file?.name, message.file?.mimeType, message.file?.size, message.file?.url,
            message.parentMessageId, message.updatedAt,
        ]
    }

    /// Binds `message` to a prepared statement whose parameters are ``names`` in order,
    /// straight through the C API: the batch-ingest hot path, where building argument
    /// arrays of existentials cost more than SQLite itself.
    static func bind(_ message: Message, to statement: OpaquePointer) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)  // SQLite copies the text
        func text(_ index: Int32, _ value: String?) {
            guard let value else { sqlite3_bind_null(statement, index); return }
            sqlite3_bind_text(statement, index, value, -1, transient)
        }
        func int(_ index: Int32, _ value: Int64?) {
            guard let value else { sqlite3_bind_null(statement, index); return }
            sqlite3_bind_int64(statement, index, value)
        }
        text(1, message.channelURL)
        int(2, message.createdAt)
        int(3, message.messageId)
        text(4, message.reqId)
        text(5, message.senderId)
        text(6, message.kind.rawValue)
        text(7, message.text)
        text(8, message.customType)
        text(9, message.data)
        text(10, message.file?.name)
        text(11, message.file?.mimeType)
        int(12, message.file?.size)
        text(13, message.file?.url)
        int(14, message.parentMessageId)
        int(15, message.updatedAt)
    }

    /// Reads a message from `row`, whose columns start at `offset` in ``names`` order.
    ///
    /// An unknown `kind` (written by a newer library) reads as ``MessageKind/text``
    /// rather than failing the whole page.
    static func message(from row: Row, at offset: Int = 0, state: SyncState = .synced) -> Message {
        var file: FileInfo?
        if let name = row[offset + 9] as String? {
            file = FileInfo(
                name: name, mimeType: row[offset + 10] ?? "", size: row[offset + 11] ?? 0,
                url: row[offset + 12], localPath: nil)
        }
        return Message(
            messageId: row[offset + 2], reqId: row[offset + 3], channelURL: row[offset + 0],
            senderId: row[offset + 4], kind: MessageKind(rawValue: row[offset + 5]) ?? .text,
            text: row[offset + 6], customType: row[offset + 7], data: row[offset + 8], file: file,
            parentMessageId: row[offset + 13], createdAt: row[offset + 1], updatedAt: row[offset + 14],
            syncState: state)
    }
}
