/// An edit or a deletion of one of the user's synced messages, waiting in the outbox.
///
/// ``SyncManager/updateMessage(messageId:channelURL:text:)`` and
/// ``SyncManager/deleteMessage(messageId:channelURL:)`` store one each. It travels in
/// its channel's text lane, in order with the text messages sent around it, and is
/// reported by ``MessageCollectionEvent/operationFailed(_:_:)`` if the service refuses
/// it for good.
///
/// ```swift
/// for await event in collection.events {
///     if case .operationFailed(let operation, let failure) = event, operation.kind == .edit {
///         showToast("Your edit could not be saved: \(failure.message)")
///     }
/// }
/// ```
public struct OutboxOperation: Sendable, Hashable {
    /// What the operation does.
    public enum Kind: String, Sendable {
        /// Replace the message's text.
        case edit
        /// Delete the message.
        case deletion
    }

    /// The outbox entry's own request id (a UUID string).
    public var id: String
    /// What the operation does.
    public var kind: Kind
    /// The channel of the message.
    public var channelURL: String
    /// The message it changes.
    public var messageId: Int64
    /// The edit's new text; `nil` for a deletion.
    public var text: String?

    /// Creates an operation.
    public init(id: String, kind: Kind, channelURL: String, messageId: Int64, text: String? = nil) {
        self.id = id
        self.kind = kind
        self.channelURL = channelURL
        self.messageId = messageId
        self.text = text
    }
}
