/// A message to store on the server, keyed by ``reqId`` so that sending is idempotent.
///
/// ```swift
/// let request = SendMessageRequest(reqId: UUID().uuidString, channelURL: "general",
///                                  kind: .text, text: "Hi")
/// let stored = try await service.sendMessage(request)   // the same answer every time
/// ```
public struct SendMessageRequest: Sendable, Hashable, Codable {
    /// The client request id; the server stores one message per `(channelURL, reqId)`.
    public var reqId: String
    /// The channel to post to.
    public var channelURL: String
    /// What the message carries.
    public var kind: MessageKind
    /// The body, or the caption of a media message.
    public var text: String
    /// An app-defined type; `""` when none.
    public var customType: String
    /// An app-defined payload; `""` when none.
    public var data: String
    /// The uploaded file of a media message (with its `url`).
    public var file: FileInfo?
    /// The message this one replies to.
    public var parentMessageId: Int64?

    /// Creates a request.
    public init(
        reqId: String, channelURL: String, kind: MessageKind, text: String = "",
        customType: String = "", data: String = "", file: FileInfo? = nil, parentMessageId: Int64? = nil
    ) {
        self.reqId = reqId
        self.channelURL = channelURL
        self.kind = kind
        self.text = text
        self.customType = customType
        self.data = data
        self.file = file
        self.parentMessageId = parentMessageId
    }
}
