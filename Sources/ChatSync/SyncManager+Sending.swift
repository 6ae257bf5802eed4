extension SyncManager {
    /// Sends a message: it is written to the outbox before this returns, shown as
    /// pending in the channel's collections, and sent through its lane when the
    /// connection allows. Nothing else in the outbox is affected by a refusal.
    ///
    /// ```swift
    /// let pending = try await manager.sendMessage(.text("On my way"), channelURL: "general")
    /// for await state in manager.observeMessage(reqId: pending.reqId) { print(state.syncState) }
    /// ```
    ///
    /// - Returns: the stored message, `.created`, with its `reqId`.
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for an empty channel URL,
    ///   empty text, a custom message without a type, text or data over
    ///   ``SendLimits``, a file that is missing, unreadable or too large, or a cached
    ///   channel the user is not a member of; ``SyncManagerError/Code/closed`` after
    ///   `close()`. What only the server can tell (an unknown channel, a frozen one)
    ///   fails the message later with `failure.isRetryable == false`.
    public func sendMessage(_ params: MessageParams, channelURL: String) async throws -> Message {
        try await engine.send(params, channelURL: channelURL)
    }

    /// Sends a failed message again; it stays in the failed list while in flight and
    /// joins the end of its lane.
    ///
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` when no failed message has that `reqId`.
    public func resendMessage(reqId: String) async throws -> Message {
        try await engine.resend(reqId: reqId)
    }

    /// Removes a message that is waiting (`.created`) or failed; one already in flight
    /// cannot be taken back (``SyncManagerError/Code/invalidParameter``).
    public func cancelMessage(reqId: String) async throws {
        try await engine.cancel(reqId: reqId)
    }

    /// Removes a failed message (reason `.removeManualAction`).
    public func deleteFailedMessage(reqId: String) async throws {
        try await engine.deleteFailed(reqId: reqId)
    }

    /// Removes every failed message, of one channel or of all.
    public func deleteAllFailedMessages(channelURL: String? = nil) async throws {
        try await engine.deleteAllFailed(channelURL: channelURL)
    }

    /// The message with `reqId` as it stands: in the outbox, or synced.
    public func message(reqId: String) async -> Message? {
        await engine.message(reqId: reqId)
    }

    /// The message's current state, then every change; finishes when it is synced
    /// or removed (and at once if no message has that `reqId`).
    public func observeMessage(reqId: String) -> AsyncStream<Message> {
        let (stream, continuation) = AsyncStream<Message>.makeStream()
        let engine = engine
        Task { await engine.observe(reqId: reqId, continuation) }
        return stream
    }

    /// Edits the text of one of the user's synced messages, on the service and then in
    /// the cache and collections.
    ///
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for empty text or a cached
    ///   message of another user; ``ChatServiceError`` when the service refuses or
    ///   cannot be reached.
    public func updateMessage(messageId: Int64, channelURL: String, text: String) async throws -> Message {
        try await engine.editOwn(messageId: messageId, channelURL: channelURL, text: text)
    }

    /// Deletes one of the user's synced messages, on the service and then in the
    /// cache and collections.
    public func deleteMessage(messageId: Int64, channelURL: String) async throws {
        try await engine.deleteOwn(messageId: messageId, channelURL: channelURL)
    }
}
