import ChatSync

/// One user's connection to a ``SimulatedChatServer``: the `ChatService` a
/// `SyncManager` under test talks to. Get one with ``SimulatedChatServer/service(for:)``.
public struct SimulatedChatService: ChatService {
    /// The server behind the connection.
    public let server: SimulatedChatServer
    /// The user the connection acts for.
    public let userId: String

    /// Adds the plan's real-time latency, and any hold, before a request reaches the server.
    private func delay() async throws {
        await server.waitWhileHeld()
        let latency = await server.faults.latency
        if latency > .zero { try await Task.sleep(for: latency) }
    }

    /// A read's answer, made already, waits on its way while
    /// ``SimulatedChatServer/holdReadAnswers()`` holds it.
    private func arrivingLate<Answer: Sendable>(_ answer: Answer) async -> Answer {
        await server.waitWhileReadAnswersHeld()
        return answer
    }

    /// Fetches messages around a position.
    public func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        try await delay()
        return try await arrivingLate(server.handleFetchMessages(query, as: userId))
    }

    /// Updates and deletions since a token.
    public func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try await delay()
        return try await arrivingLate(server.handleMessageChangeLogs(channelURL: channelURL, token: token, limit: limit, as: userId))
    }

    /// Stored messages by request id.
    public func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await delay()
        return try await server.handleLookUp(channelURL: channelURL, reqIds: reqIds, as: userId)
    }

    /// Sends a message, idempotently by `(channelURL, reqId)`.
    public func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        try await delay()
        return try await server.answeringLate { server in try server.handleSend(request, as: userId) }
    }

    /// Uploads a file, reporting progress in steps of 10 %.
    public func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        try await delay()
        await server.waitWhileUploadsHeld()
        return try await server.handleUpload(request, progress: progress, as: userId)
    }

    /// Edits one of the user's own messages, once per operation id.
    public func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        try await delay()
        return try await server.answeringLate { server in
            try server.handleUpdate(channelURL: channelURL, messageId: messageId, text: text, operationId: operationId, as: userId)
        }
    }

    /// Deletes one of the user's own messages, once per operation id.
    public func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        try await delay()
        try await server.answeringLate { server in
            try server.handleDelete(channelURL: channelURL, messageId: messageId, operationId: operationId, as: userId)
        }
    }

    /// A page of the user's channels.
    public func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage {
        try await delay()
        return try await arrivingLate(server.handleFetchChannels(query, as: userId))
    }

    /// Channel changes since a token.
    public func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await delay()
        return try await arrivingLate(server.handleChannelChangeLogs(token: token, limit: limit, as: userId))
    }

    /// Real-time events, starting with the current connection state.
    public func events() async -> AsyncStream<ServiceEvent> {
        await server.subscribe(userId)
    }
}
