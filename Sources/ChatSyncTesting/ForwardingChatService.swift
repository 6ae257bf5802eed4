import ChatSync

/// A `ChatService` that wraps another and forwards every call to it, so that a test
/// double overrides only the calls it changes (lose a send's answer, hold an event,
/// count look-ups) instead of writing out all ten.
///
/// ```swift
/// struct LosingEveryAnswer: ForwardingChatService {
///     let base: any ChatService
///     func sendMessage(_ request: SendMessageRequest) async throws -> Message {
///         _ = try await base.sendMessage(request)  // the server stores it …
///         throw ChatServiceError.transient(.timeout, "the answer was lost")  // … the app never hears
///     }
/// }
/// ```
public protocol ForwardingChatService: ChatService {
    /// The service every call not implemented by the wrapper goes to.
    var base: any ChatService { get }
}

extension ForwardingChatService {
    /// Forwards to ``base``.
    public func fetchMessages(_ query: MessageQuery) async throws -> MessagePage { try await base.fetchMessages(query) }
    /// Forwards to ``base``.
    public func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
    }
    /// Forwards to ``base``.
    public func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await base.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
    }
    /// Forwards to ``base``.
    public func sendMessage(_ request: SendMessageRequest) async throws -> Message { try await base.sendMessage(request) }
    /// Forwards to ``base``.
    public func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        try await base.uploadFile(request, progress: progress)
    }
    /// Forwards to ``base``.
    public func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        try await base.updateMessage(channelURL: channelURL, messageId: messageId, text: text, operationId: operationId)
    }
    /// Forwards to ``base``.
    public func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        try await base.deleteMessage(channelURL: channelURL, messageId: messageId, operationId: operationId)
    }
    /// Forwards to ``base``.
    public func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage { try await base.fetchChannels(query) }
    /// Forwards to ``base``.
    public func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await base.channelChangeLogs(token: token, limit: limit)
    }
    /// Forwards to ``base``.
    public func events() async -> AsyncStream<ServiceEvent> { await base.events() }
}
