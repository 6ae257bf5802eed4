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
        bindContent(of: message, to: &binder)
    }

    /// Binds what a newer version of a message may change, from `sender_id` to
    /// `updated_at` in ``names`` order (everything after the keys and the request id).
    static func bindContent(of message: Message, to binder: inout StatementBinder) {
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

    /// `message` as a read of its stored row gives it back: what the columns do not keep
    /// (a local file's path, the sync state and its details) reads as a synced message's.
    static func asStored(_ message: Message) -> Message {
        var stored = message.asSynced
        stored.file?.localPath = nil
        stored.isEditPending = false
        return stored
    }

    /// Whether ``asStored(_:)`` leaves `message` as it is.
    static func isAsStored(_ message: Message) -> Bool {
        message.syncState == .synced && message.failure == nil && message.uploadProgress == nil
            && message.file?.localPath == nil && !message.isEditPending
    }

    /// Reads a message from the row a statement stands on, whose columns start at
    /// `offset` in ``names`` order, straight through SQLite's C API (GRDB's `Row` cost
    /// more than SQLite's own work on a page read and an outbox scan).
    ///
    /// An unknown `kind` (written by a newer library) reads as ``MessageKind/text``
    /// rather than failing the whole page.
    static func message(from row: ColumnReader, at offset: Int = 0, state: SyncState = .synced) -> Message {
        let at = Int32(offset)
        var file: FileInfo?
        if let name = row.text(at + 9) {
            file = FileInfo(
                name: name, mimeType: row.text(at + 10) ?? "", size: row.int(at + 11) ?? 0, url: row.text(at + 12),
                localPath: nil)
        }
        return Message(
            messageId: row.int(at + 2) ?? 0, reqId: row.text(at + 3) ?? "", channelURL: row.text(at + 0) ?? "",
            senderId: row.text(at + 4) ?? "", kind: row.text(at + 5).flatMap(MessageKind.init(rawValue:)) ?? .text,
            text: row.text(at + 6) ?? "", customType: row.text(at + 7) ?? "", data: row.text(at + 8) ?? "", file: file,
            parentMessageId: row.int(at + 13), createdAt: row.int(at + 1) ?? 0, updatedAt: row.int(at + 14),
            syncState: state)
    }
}
