/// What the app wants to send: the input of ``SyncManager/sendMessage(_:channelURL:)``.
///
/// Build one with a factory, then adjust the optional fields:
///
/// ```swift
/// var reply = MessageParams.text("Sounds good")
/// reply.parentMessageId = 42
/// let photo = MessageParams.file(.image, localPath: "/tmp/cat.jpg",
///                                name: "cat.jpg", mimeType: "image/jpeg", caption: "Look")
/// ```
public struct MessageParams: Sendable, Hashable {
    /// What the message carries.
    public internal(set) var kind: MessageKind
    /// The body, or the caption of a media message.
    public var text: String
    /// The source file of a media message.
    public internal(set) var localPath: String?
    /// The file name shown to users, for media messages.
    public internal(set) var fileName: String?
    /// The MIME type, for media messages.
    public internal(set) var mimeType: String?
    /// The message this one replies to.
    public var parentMessageId: Int64?
    /// An app-defined type; `""` when none.
    public var customType: String
    /// An app-defined payload; `""` when none.
    public var data: String

    init(
        kind: MessageKind, text: String, customType: String = "", data: String = "",
        localPath: String? = nil, fileName: String? = nil, mimeType: String? = nil
    ) {
        self.kind = kind
        self.text = text
        self.customType = customType
        self.data = data
        self.localPath = localPath
        self.fileName = fileName
        self.mimeType = mimeType
    }

    /// A text message.
    public static func text(_ text: String) -> MessageParams {
        MessageParams(kind: .text, text: text)
    }

    /// A custom message with an app-defined type and payload.
    public static func custom(customType: String, data: String, text: String = "") -> MessageParams {
        MessageParams(kind: .custom, text: text, customType: customType, data: data)
    }

    /// A media message whose file is uploaded before the message is sent.
    ///
    /// - Parameters:
    ///   - kind: one of ``MessageKind/image``, ``MessageKind/video``,
    ///     ``MessageKind/audio`` or ``MessageKind/file``.
    ///   - localPath: the file on this device; it must stay there until the message is sent.
    ///   - name: the file name shown to users.
    ///   - mimeType: the file's MIME type, such as `image/jpeg`.
    ///   - caption: the text shown with the file; `""` for none.
    public static func file(
        _ kind: MessageKind, localPath: String, name: String, mimeType: String, caption: String = ""
    ) -> MessageParams {
        MessageParams(kind: kind, text: caption, localPath: localPath, fileName: name, mimeType: mimeType)
    }
}
