/// What ChatSync needs from a chat backend. Implement it to connect ChatSync to yours.
///
/// ChatSync calls these methods from background tasks, never on the caller's
/// thread, and may call several at once. Throw ``ChatServiceError`` (or any error;
/// see ``ChatServiceError/classify(_:)``) so ChatSync can tell a transient failure,
/// which it retries, from a permanent one, which it reports.
///
/// ```swift
/// struct MyBackend: ChatService {
///     func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
///         let json = try await http.get("/channels/\(query.channelURL)/messages", query.parameters)
///         return try decoder.decode(MessagePage.self, from: json)
///     }
///     // …
/// }
/// let manager = try await SyncManager(userId: "alice", service: MyBackend(), databasePath: path)
/// ```
///
/// `ChatSyncTesting.SimulatedChatServer` provides a complete in-memory implementation.
public protocol ChatService: Sendable {
    /// Messages around a position in a channel.
    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage

    /// Updates and deletions in a channel since `token`.
    ///
    /// - Parameters:
    ///   - channelURL: the channel whose changes are asked for.
    ///   - token: a token from an earlier answer, or `nil` for "from now
    ///     on": the answer then holds no changes, only a token to start from.
    ///   - limit: the most changes (updates and deletions together) to answer at once.
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs

    /// The stored messages of a channel that were sent with any of `reqIds`.
    /// Missing ones are simply absent from the answer.
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message]

    /// Sends a message. Idempotent by `(channelURL, reqId)`: a repeated request
    /// answers the message stored by the first one and stores nothing new.
    ///
    /// Throw a permanent error, ``ChatServiceError/Code/rateLimited`` or
    /// ``ChatServiceError/Code/unavailable`` only when the service stored nothing: the
    /// outbox then lets the app cancel the waiting message. When the message may have
    /// been stored (an answer lost or unreadable, a second request after the storing one
    /// failed), throw ``ChatServiceError/Code/timeout`` or
    /// ``ChatServiceError/Code/badResponse``. ``ChatServiceError/Code/network`` after the
    /// request went (a connection that broke) is also taken for a possibly stored message:
    /// the outbox looks it up by `reqId` before the message can fail.
    ///
    /// Pages (``fetchMessages(_:)``) must be complete by key: a page that reaches the
    /// newest message lacks only messages the service no longer holds, and the record
    /// behind ``SyncManager/message(reqId:)`` forgets those.
    func sendMessage(_ request: SendMessageRequest) async throws -> Message

    /// Uploads a media message's file and answers its information with ``FileInfo/url`` set.
    ///
    /// - Parameters:
    ///   - request: the file and the message it belongs to.
    ///   - progress: called with the fraction done, from 0 to 1.
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo

    /// Changes the text of one of the user's own messages.
    ///
    /// - Parameters:
    ///   - channelURL: the message's channel.
    ///   - messageId: the message to change.
    ///   - text: the new text.
    ///   - operationId: names this edit in ChatSync's outbox. After a lost
    ///     response or a relaunch ChatSync sends it again with the same id; a service that
    ///     can key requests (a Matrix transaction id, an idempotency header) should use it
    ///     so that the edit is applied once. Setting the same text twice is harmless too.
    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message

    /// Deletes one of the user's own messages. Deleting a message that is already gone
    /// should succeed or throw a permanent ``ChatServiceError/Code/notFound``; ChatSync counts both as done.
    ///
    /// - Parameters:
    ///   - channelURL: the message's channel.
    ///   - messageId: the message to delete.
    ///   - operationId: names this deletion in ChatSync's outbox; repeats carry
    ///     the same id (see ``updateMessage(channelURL:messageId:text:operationId:)``).
    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws

    /// A page of the user's channels.
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage

    /// Channels changed or gone for the user since `token` (`nil`: from now on).
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs

    /// Real-time events and connection changes.
    ///
    /// Each call opens a subscription, registered before the call returns, whose
    /// first element is the current
    /// ``ServiceEvent/connectionChanged(_:)``; ending the stream's iteration
    /// closes it.
    func events() async -> AsyncStream<ServiceEvent>
}
