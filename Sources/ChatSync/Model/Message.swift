/// One chat message, as the cache, the outbox and the collections see it.
///
/// A message is a plain value. Its ``syncState`` says where it is in its life:
/// waiting in the outbox (``SyncState/created``), on its way
/// (``SyncState/uploading``, ``SyncState/syncing``), stored on the server
/// (``SyncState/synced``) or given up on (``SyncState/failed``).
///
/// ```swift
/// let draft = Message(channelURL: "general", senderId: "alice",
///                     text: "Hello", createdAt: 1_700_000_000_000)
/// draft.updatedAt == draft.createdAt   // true
/// ```
///
/// Identity: a synced message is identified by ``messageId`` within its
/// channel; a pending or failed one by ``reqId``.
public struct Message: Sendable, Hashable, Codable {
    /// The server's id, unique within the channel; `0` until the message is synced.
    public var messageId: Int64
    /// The client request id (a UUID string) that makes sending idempotent;
    /// `""` for messages that were not sent from this device.
    public var reqId: String
    /// The channel the message belongs to.
    public var channelURL: String
    /// The user who sent the message.
    public var senderId: String
    /// What the message carries.
    public var kind: MessageKind
    /// The body of a text message, or the caption of a media message.
    public var text: String
    /// An app-defined type; `""` when none.
    public var customType: String
    /// An app-defined payload; `""` when none.
    public var data: String
    /// The attachment of an image, video, audio or file message.
    public var file: FileInfo?
    /// The message this one replies to, if any.
    public var parentMessageId: Int64?
    /// When the message was created, in milliseconds since 1970.
    public var createdAt: Int64
    /// When the message was last changed, in milliseconds since 1970.
    public var updatedAt: Int64
    /// Where the message is in its life.
    public var syncState: SyncState
    /// Upload progress from 0 to 1 while ``syncState`` is ``SyncState/uploading``.
    public var uploadProgress: Double?
    /// Why the message failed, set when ``syncState`` is ``SyncState/failed``.
    public var failure: SyncFailure?
    /// `true` while an edit of this message by the user waits in the outbox: ``text``
    /// is then the user's newest text, not yet confirmed by the service.
    ///
    /// Local state like ``syncState``: services neither send nor read it, and it is
    /// encoded only when `true` (absent decodes as `false`).
    public var isEditPending: Bool = false

    /// Creates a message. An `updatedAt` of `nil` means "the same as `createdAt`".
    public init(
        messageId: Int64 = 0, reqId: String = "", channelURL: String, senderId: String,
        kind: MessageKind = .text, text: String = "", customType: String = "", data: String = "",
        file: FileInfo? = nil, parentMessageId: Int64? = nil, createdAt: Int64, updatedAt: Int64? = nil,
        syncState: SyncState = .synced, uploadProgress: Double? = nil, failure: SyncFailure? = nil
    ) {
        self.messageId = messageId
        self.reqId = reqId
        self.channelURL = channelURL
        self.senderId = senderId
        self.kind = kind
        self.text = text
        self.customType = customType
        self.data = data
        self.file = file
        self.parentMessageId = parentMessageId
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.syncState = syncState
        self.uploadProgress = uploadProgress
        self.failure = failure
    }
}

// MARK: - Coding

extension Message {
    private enum CodingKeys: String, CodingKey {
        case messageId, reqId, channelURL, senderId, kind, text, customType, data, file, parentMessageId
        case createdAt, updatedAt, syncState, uploadProgress, failure, isEditPending
    }

    /// Decodes a message; a missing `isEditPending` is `false`, so services never need it.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            messageId: try values.decode(Int64.self, forKey: .messageId),
            reqId: try values.decode(String.self, forKey: .reqId),
            channelURL: try values.decode(String.self, forKey: .channelURL),
            senderId: try values.decode(String.self, forKey: .senderId),
            kind: try values.decode(MessageKind.self, forKey: .kind),
            text: try values.decode(String.self, forKey: .text),
            customType: try values.decode(String.self, forKey: .customType),
            data: try values.decode(String.self, forKey: .data),
            file: try values.decodeIfPresent(FileInfo.self, forKey: .file),
            parentMessageId: try values.decodeIfPresent(Int64.self, forKey: .parentMessageId),
            createdAt: try values.decode(Int64.self, forKey: .createdAt),
            updatedAt: try values.decode(Int64.self, forKey: .updatedAt),
            syncState: try values.decode(SyncState.self, forKey: .syncState),
            uploadProgress: try values.decodeIfPresent(Double.self, forKey: .uploadProgress),
            failure: try values.decodeIfPresent(SyncFailure.self, forKey: .failure))
        isEditPending = try values.decodeIfPresent(Bool.self, forKey: .isEditPending) ?? false
    }

    /// Encodes a message; `isEditPending` only when `true`, so a service's wire format
    /// does not change.
    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(messageId, forKey: .messageId)
        try values.encode(reqId, forKey: .reqId)
        try values.encode(channelURL, forKey: .channelURL)
        try values.encode(senderId, forKey: .senderId)
        try values.encode(kind, forKey: .kind)
        try values.encode(text, forKey: .text)
        try values.encode(customType, forKey: .customType)
        try values.encode(data, forKey: .data)
        try values.encodeIfPresent(file, forKey: .file)
        try values.encodeIfPresent(parentMessageId, forKey: .parentMessageId)
        try values.encode(createdAt, forKey: .createdAt)
        try values.encode(updatedAt, forKey: .updatedAt)
        try values.encode(syncState, forKey: .syncState)
        try values.encodeIfPresent(uploadProgress, forKey: .uploadProgress)
        try values.encodeIfPresent(failure, forKey: .failure)
        if isEditPending { try values.encode(true, forKey: .isEditPending) }
    }
}

// MARK: - Ordering

extension Message {
    /// The key that orders messages in a channel: `(createdAt, messageId)`.
    ///
    /// Ties on `createdAt` are broken by `messageId`, so every synced message has
    /// one exact place in its channel.
    public var sortKey: MessageKey { MessageKey(createdAt: createdAt, messageId: messageId) }
}
