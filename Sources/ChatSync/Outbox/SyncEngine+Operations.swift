import Foundation

// MARK: - Edits and deletions of the user's synced messages enter the outbox

extension SyncEngine {
    /// The user's own message as the service last confirmed it: cached, or answered and
    /// waiting for its echo. Anything else is ``SyncManagerError/Code/invalidParameter``.
    private func ownSyncedMessage(messageId: Int64, channelURL: String) throws -> Message {
        try checkOpen()
        try Self.checkKey(channelURL, named: "channelURL")
        guard messageId > 0 else { throw SyncManagerError(.invalidParameter, "a synced message needs a positive messageId") }
        guard let message = try confirmedCopy(channelURL: channelURL, messageId: messageId) else {
            throw SyncManagerError(.invalidParameter, "message \(messageId) of \(channelURL) is not in the cache")
        }
        guard message.isSent(by: userId) else {
            throw SyncManagerError(.invalidParameter, "message \(messageId) was sent by \(message.senderId), not \(userId)")
        }
        guard !pendingWrites.isBeingDeleted(channelURL: channelURL, messageId: messageId) else {
            throw SyncManagerError(.invalidParameter, "message \(messageId) is being deleted")
        }
        return message
    }

    /// A message as the service last confirmed it to this device: cached, or answered and
    /// waiting for its echo.
    func confirmedCopy(channelURL: String, messageId: Int64) throws -> Message? {
        try store.message(channelURL: channelURL, messageId: messageId) ?? awaitedEcho(channelURL: channelURL, messageId: messageId)
    }

    /// A message of this device the service answered for, still waiting for its echo:
    /// shown in pending lists (failed lists, answered on a resend), not cached yet.
    func awaitedEcho(channelURL: String, messageId: Int64) -> Message? {
        outbox.awaitingEcho.values.first { $0.channelURL == channelURL && $0.messageId == messageId }
    }

    /// How a pending (or failed) list shows an answer still waiting for its echo: `.syncing`, as the
    /// views that listed it when it was sent still show it (pending means created,
    /// uploading or syncing). It is `.synced` once its echo puts it in the succeeded lists.
    /// It keeps the `createdAt` it was sent with, so every pending list orders it alike
    /// whatever the distance between the device's clock and the service's.
    func pendingCopy(of answer: Message) -> Message {
        var copy = answer
        copy.syncState = .syncing
        copy.createdAt = outbox.listedAt(awaited: answer.reqId) ?? answer.createdAt
        return copy
    }

    /// Stores an edit in the outbox, shows it at once, and wakes the channel's text lane.
    func editOwn(messageId: Int64, channelURL: String, text: String) throws -> Message {
        guard !text.allSatisfy(\.isWhitespace), text.count <= SendLimits.maxTextLength else {
            throw SyncManagerError(.invalidParameter, "the new text must not be empty or longer than \(SendLimits.maxTextLength)")
        }
        let confirmed = try ownSyncedMessage(messageId: messageId, channelURL: channelURL)
        try enqueue(OutboxOperation(id: RandomIdentifier.make(), kind: .edit, channelURL: channelURL, messageId: messageId, text: text))
        let shown = pendingWrites.overlaid(confirmed) ?? confirmed
        refreshViews(channelURL, with: [confirmed], admitting: false)
        noteChangedMessage(channelURL: channelURL, messageId: messageId, now: confirmed)
        guard isAwaitingEcho(shown) else { return shown }
        showAwaitedEcho(shown)
        // The app gets the message as its pending lists show it (API §4.6: "that local message").
        return pendingCopy(of: shown)
    }

    /// Whether `message` is an answer of this device still waiting for its echo.
    private func isAwaitingEcho(_ message: Message) -> Bool {
        !message.reqId.isEmpty && outbox.awaitingEcho[message.reqId]?.messageId == message.messageId
    }

    /// A message answered but still waiting for its echo is in pending lists (failed
    /// lists, for one answered on a resend): an edit shows there at once (the echo enters
    /// the succeeded lists with the edit laid over).
    func showAwaitedEcho(_ shown: Message) {
        guard isAwaitingEcho(shown) else { return }
        let copy = pendingCopy(of: shown)
        for view in views(of: shown.channelURL) where view.isPending(shown.reqId) || view.isFailed(shown.reqId) {
            list(awaited: copy, in: view)
        }
    }

    /// Lists (or updates) an awaited answer's copy in the view's list it belongs in: the
    /// pending one, or the failed one for an answer to a resend, as every collection does.
    func list(awaited copy: Message, in view: MessageView) {
        if outbox.isAwaitedInFailedList(copy.reqId) { view.upsertFailed(copy, reason: .none) } else { view.upsertPending(copy) }
    }

    /// Stores a deletion in the outbox, removes the message from every view at once, and
    /// wakes the lane. Edits of the message still queued are dropped: the deletion
    /// supersedes them. Deleting a message whose deletion is queued already does nothing.
    func deleteOwn(messageId: Int64, channelURL: String) throws {
        if (try? checkOpen()) != nil, pendingWrites.isBeingDeleted(channelURL: channelURL, messageId: messageId) { return }
        let confirmed = try ownSyncedMessage(messageId: messageId, channelURL: channelURL)
        let superseded = pendingWrites.operations(channelURL: channelURL, messageId: messageId).map(\.id)
        try store.deleteOperations(ids: superseded)
        for id in superseded { pendingWrites.remove(id: id) }
        try enqueue(OutboxOperation(id: RandomIdentifier.make(), kind: .deletion, channelURL: channelURL, messageId: messageId))
        // Answered but waiting for its echo: it leaves the pending (or, answered on a
        // resend, the failed) list now; the echo, if it comes, is hidden by the queued deletion.
        let awaited = isAwaitingEcho(confirmed)
        for view in views(of: channelURL) {
            view.remove(messageIds: [messageId])
            guard awaited else { continue }
            view.removePending(confirmed.reqId)
            view.removeFailed(confirmed.reqId, reason: .removeManualAction)
        }
        noteChangedMessage(channelURL: channelURL, messageId: messageId, now: nil)
    }

    private func enqueue(_ operation: OutboxOperation) throws {
        let seq = try store.insertOperation(operation)
        pendingWrites.add(QueuedOperation(operation: operation, seq: seq, attempts: 0))
        kickLanes(operation.channelURL)
    }

    /// Corrects the text of a message not sent yet (`.created` or `.failed`), in the
    /// outbox itself: no request is made for it.
    func updatePending(reqId: String, text: String) throws -> Message {
        try checkOpen()
        guard var entry = try store.outboxEntry(reqId: reqId), entry.origin == .outbox,
            entry.message.syncState == .created || entry.message.syncState == .failed
        else {
            throw SyncManagerError(.invalidParameter, "no waiting or failed message of this device has reqId '\(reqId)'")
        }
        // Empty text is refused whatever the kind (API §4.6): a caption or custom text
        // emptied here would follow as an edit (`keepCorrection`) that `updateMessage`
        // itself refuses, once an earlier attempt turned out stored.
        guard text.count <= SendLimits.maxTextLength, !text.allSatisfy(\.isWhitespace) else {
            throw SyncManagerError(.invalidParameter, "the new text must not be empty or longer than \(SendLimits.maxTextLength)")
        }
        // An attempt may have reached the service already (its answer lost): the text it
        // stored is then corrected by an edit once the message is known to be there.
        // Not knowable after every relaunch (an attempt cut off by a lost connection counts
        // no retry), so always: the follow-up edit is made only if the texts differ.
        entry.textCorrected = true
        entry.message.text = text
        return try save(entry).message
    }

    /// A message of this device turned out stored with the text of an attempt made before
    /// the app corrected it: the user's text follows as an edit, shown at once.
    func keepCorrection(of entry: OutboxEntry, answeredWith sent: Message) {
        guard entry.textCorrected, sent.text != entry.message.text, sent.messageId > 0 else { return }
        let edit = OutboxOperation(
            id: RandomIdentifier.make(), kind: .edit, channelURL: sent.channelURL, messageId: sent.messageId, text: entry.message.text)
        do { try enqueue(edit) } catch { logger.error("could not queue the correction of \(entry.reqId): \(error)") }
    }
}
