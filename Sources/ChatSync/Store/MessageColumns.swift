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

    /// Binds `message`'s columns in ``names`` order as the binder's next parameters,
    /// through SQLite's C API (the batch ingest and a send).
    static func bind(_ message: Message, to binder: inout StatementBinder) {
        binder.text(message.channelURL)
        binder.int(message.createdAt)
        binder.int(message.messageId)
        binder.text(message.reqId)
        binder.text(message.senderId)
        binder.text(message.kind.rawValue)
        binder.text(message.text)
        binder.text(message.customType)
        binder.text(message.data)
        binder.text(message.file?.name)
        binder.text(message.file?.mimeType)
        binder.int(message.file?.size)
        binder.text(message.file?.url)
        binder.int(message.parentMessageId)
        binder.int(message.updatedAt)
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
