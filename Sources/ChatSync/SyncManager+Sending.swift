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
    /// The message is dated by the manager's clock, but never before the channel's newest
    /// cached message, and always at least one millisecond after every message the
    /// channel's pending and failed lists hold from this device: those lists order by
    /// `createdAt`, and two sends in one millisecond would otherwise be ordered by when
    /// each collection heard of them.
    ///
    /// - Returns: the stored message, `.created`, with its `reqId`.
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for an empty channel URL (or one holding a NUL),
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

    /// Removes a message that is waiting (`.created`), uploading its file (the upload is
    /// cancelled and nothing is sent) or failed. One whose send request is out
    /// (`.syncing`) cannot be taken back: ``SyncManagerError/Code/invalidParameter``;
    /// nor can one waiting again after a request went out (its answer lost, in this run or
    /// before a relaunch), since the service may already hold it. A request the service
    /// refused (429, 503, a permanent error) stored nothing and does not count (the
    /// service's part of this: ``ChatService/sendMessage(_:)``).
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
    ///
    /// Synced means the service stored it: a message whose answer came before its
    /// real-time echo is `.synced` here (with the service's `messageId` and time), while
    /// collections still list it as pending (`.syncing`, with the time it was sent) until
    /// the echo places it among the succeeded messages, so that it never leaves a hole.
    ///
    /// A synced message is answered from the cache, or else from the record of the last
    /// 1,000 messages this device saw synced, which the cache file keeps across relaunches:
    /// one answered just before the app was killed (before its echo), one sent to a
    /// channel no collection showed, one evicted since. The record follows the edits and
    /// deletions the engine learns of (real-time events, change logs, pages); changes made
    /// while the app was away (not running, or offline) reach it when the message's channel
    /// syncs again. It goes with ``clearCache()``, and a channel's part with the channel's
    /// history (a refused change-log token, the channel deleted or left). `nil` means the
    /// message was never sent from here, was removed unsent, or is deleted or forgotten.
    public func message(reqId: String) async -> Message? {
        await engine.message(reqId: reqId)
    }

    /// The message's current state, then every change; finishes when it is synced
    /// or removed (and at once if no message has that `reqId`).
    ///
    /// The stream starts on the manager's engine a moment after this returns: its first
    /// element is the state at that point, so a change made in between (by a lane
    /// already sending the message) arrives folded into it rather than on its own, and a
    /// message removed in between finishes the stream without any element.
    public func observeMessage(reqId: String) -> AsyncStream<Message> {
        let (stream, continuation) = AsyncStream<Message>.makeStream()
        let engine = engine
        Task { await engine.observe(reqId: reqId, continuation) }
        return stream
    }

    /// Edits the text of one of the user's synced messages, offline too (Guarantees:
    /// Edits and deletions).
    ///
    /// The edit is stored in the outbox before this returns and shown at once: every
    /// collection holding the message gets `.succeeded(.update)` with the new text and
    /// ``Message/isEditPending`` set (`.pending(.update)`, or `.failed(.update, …, .none)`
    /// for one answered on a resend, for a message whose echo has not come). It is sent in the channel's text lane, in order
    /// with the text messages around it, and retried like a send. When it lands the
    /// service's answer replaces the local copy; if it fails for good the service's
    /// version comes back and the channel's collections get
    /// ``MessageCollectionEvent/operationFailed(_:_:)``.
    ///
    /// ```swift
    /// let shown = try await manager.updateMessage(messageId: 42, channelURL: "general", text: "Fixed typo")
    /// shown.isEditPending   // true until the service confirms it
    /// ```
    ///
    /// - Returns: the message as the collections now show it: `.synced` with
    ///   `isEditPending`, or `.syncing` for a message the service answered for whose
    ///   echo has not come (it is in the pending lists until then, or in the failed
    ///   lists for one answered on a resend).
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for empty or oversized text,
    ///   a message that is neither cached nor answered and awaiting its echo, not the
    ///   user's, or being deleted;
    ///   ``SyncManagerError/Code/closed`` after `close()`.
    public func updateMessage(messageId: Int64, channelURL: String, text: String) async throws -> Message {
        try await engine.editOwn(messageId: messageId, channelURL: channelURL, text: text)
    }

    /// Deletes one of the user's synced messages, offline too (Guarantees: Edits and
    /// deletions).
    ///
    /// The deletion is stored in the outbox before this returns, and the message leaves
    /// the collections at once (`.succeeded(.remove)`; for a message answered whose echo
    /// has not come, `.pending(.remove)`, or `.failed(.remove, …, .removeManualAction)`
    /// for one answered on a resend); edits of it still queued are dropped. It is sent in
    /// the channel's text lane; a message already gone on the service counts as deleted.
    /// If the deletion fails for good the message comes back (`.succeeded(.insert)`, or
    /// the matching `.pending(.insert)` or `.failed(.insert, …, .none)`; a resend's answer
    /// so listed is `.syncing` and cannot be resent or deleted as failed) and the collections get
    /// ``MessageCollectionEvent/operationFailed(_:_:)``. Deleting a message whose
    /// deletion is queued already does nothing.
    ///
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for a message that is
    ///   neither cached nor answered and awaiting its echo, or not the user's; ``SyncManagerError/Code/closed`` after `close()`.
    public func deleteMessage(messageId: Int64, channelURL: String) async throws {
        try await engine.deleteOwn(messageId: messageId, channelURL: channelURL)
    }

    /// Corrects the text of a message that has not been sent yet (`.created` or
    /// `.failed`), in the outbox itself; no request is made for the correction.
    ///
    /// The collections get `.pending(.update)` or `.failed(.update, …, .none)`.
    ///
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for an unknown `reqId`, a
    ///   message appended by the host, one in any other state (it may be on its way),
    ///   or text that is empty (or only white space, whatever the message's kind) or
    ///   longer than ``SendLimits``.
    public func updatePendingMessage(reqId: String, text: String) async throws -> Message {
        try await engine.updatePending(reqId: reqId, text: text)
    }
}
