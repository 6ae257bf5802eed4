// MARK: - Resolving: a message of this device is on the service, and leaves the outbox

extension SyncEngine {

    /// A message of this device is stored on the server: it leaves the outbox and,
    /// where that keeps views contiguous, enters the succeeded lists. `channelEnded`: the
    /// channel was deleted or left while the answer was on its way.
    func resolveSent(reqId: String, sent: Message, channelEnded: Bool = false) throws {
        guard let entry = try store.outboxEntry(reqId: reqId) else { return }  // resolved (by its echo) or cancelled
        try resolveSent(entry, sent: sent, channelEnded: channelEnded)
    }

    /// ``resolveSent(reqId:sent:channelEnded:)`` for an entry just read from the store in
    /// the same turn of the engine (a relaunch's look-up settles thousands, each read once).
    func resolveSent(_ entry: OutboxEntry, sent: Message, channelEnded: Bool = false) throws {
        let sent = sent.asSynced
        let reqId = entry.reqId
        let channelURL = sent.channelURL
        // Deleted, or gone with its channel, it was sent, but `message(reqId:)` must not
        // answer it as synced: the news of the end came before the answer, and nothing
        // later takes the answer back (an echo without its request id left nothing to forget).
        let deleted = channelEnded || outbox.deletedLately.contains(channelURL: channelURL, messageId: sent.messageId)
        try retire(reqId, as: sent, gone: deleted)
        if deleted {
            // Stored by an earlier attempt whose answer was lost, then deleted (or its
            // channel ended): it was sent (its observers saw it synced), and is shown
            // nowhere. Its echo came and went, or never comes.
            withdraw(entry, reason: .removeResendSucceeded)
            return
        }
        keepCorrection(of: entry, answeredWith: sent)
        noteNewMessage(sent)
        if let live = channels[channelURL]?.liveEdge, sent.sortKey > live {
            // Its real-time echo will place it; until then it stays where it is shown.
            outbox.awaitEcho(of: sent, listedAt: entry.message.createdAt, inFailedList: entry.isInFailedList)
            return
        }
        withdraw(entry, reason: .removeResendSucceeded)
        // Inside a range the cache holds as complete, the cache knows whether the service
        // still has it: its echo put it there, or it was deleted before the range was read
        // (a resend answered with what an earlier attempt stored). Adding it would show
        // a deleted message; a copy the cache holds takes the answer.
        guard try isInCompleteRange(sent.sortKey, in: channelURL) else { return }
        if var cached = try store.message(channelURL: channelURL, messageId: sent.messageId) {
            // A newer copy (an edit landed before this answer) keeps its text and takes the
            // request id an echo without one left out (seed 565 of 600 under load).
            let answered: Message
            if cached.updatedAt > sent.updatedAt {
                cached.reqId = sent.reqId
                answered = cached
            } else {
                answered = sent
            }
            try store.upsertMessages([answered])
            refreshViews(channelURL, with: [answered])
        } else {
            forgetSyncedLately(sent)  // deleted before the range was read: not answered as synced
        }
    }

    /// A message arrived from the service (real time or sync): if it is one of ours still
    /// in the outbox, or awaiting its echo, it is resolved now. Removals come first; the
    /// caller inserts it where it belongs. Many services echo a message without its
    /// request id: an awaited echo is also recognised by its id, and gets its request id back.
    func resolveArrival(_ message: inout Message) throws {
        if message.reqId.isEmpty, !outbox.awaitingEcho.isEmpty,
            let awaited = awaitedEcho(channelURL: message.channelURL, messageId: message.messageId)
        {
            message.reqId = awaited.reqId  // an answer names its own request id (checked when it came)
        }
        if message.reqId.isEmpty, message.isSent(by: userId) {
            message.reqId = try knownReqId(of: message)
            // Nothing here names it: it may be a send of this device that failed after the
            // service stored it (the answer lost, the echo held until after the failure).
            if message.reqId.isEmpty, isOnline { confirmStoredSendsInBackground(in: message.channelURL) }
        }
        guard !message.reqId.isEmpty else { return }
        // A request id names a message within one channel: the same id elsewhere, or on
        // another message, is not this device's echo (a confused or hostile service).
        if let awaited = outbox.awaitingEcho[message.reqId], awaited.channelURL == message.channelURL,
            awaited.messageId == message.messageId
        {
            // An edit of the user's that landed while the echo travelled left a newer answer
            // kept for it than the echo, made before that edit: the echo gives way to it, or
            // the message would show its older text until the edit's own event came.
            if let kept = outbox.endAwaitingEcho(message.reqId), kept.createdAt == message.createdAt,
                kept.updatedAt > message.updatedAt
            {
                message = kept
            }
            for view in views(of: message.channelURL) {
                view.removePending(message.reqId)
                view.removeFailed(message.reqId, reason: .removeResendSucceeded)
            }
            return
        }
        guard let entry = try store.outboxEntry(reqId: message.reqId), entry.channelURL == message.channelURL else { return }
        try retire(message.reqId, as: message.asSynced)
        keepCorrection(of: entry, answeredWith: message)
        withdraw(entry, reason: .removeResendSucceeded)
    }

    /// The request id this device knows for a message of the user that arrived without
    /// one: from the cached copy (its answer, a look-up or a page put it there), else from
    /// the record of messages synced lately; "" when neither knows it (sent from another
    /// device). A synced message of this device keeps its request id (API §3.3a): an echo
    /// without it that came after its answer was resolved (a late echo, one a reconnect
    /// delivered again) wrote "" over the cached copy and the views' (the outbox model
    /// generator, with echoes that leave the request id out, found it).
    private func knownReqId(of message: Message) throws -> String {
        guard message.reqId.isEmpty, message.isSent(by: userId) else { return message.reqId }
        if let cached = try store.message(channelURL: message.channelURL, messageId: message.messageId), !cached.reqId.isEmpty {
            return cached.reqId
        }
        return outbox.recentlySynced.reqId(channelURL: message.channelURL, messageId: message.messageId) ?? ""
    }

    /// `messages` with the request ids this device knows for the user's messages that
    /// lack one (see ``knownReqId(of:)``): real-time copies held while a page was asked for
    /// are stored after the page, over the copy it brought with its request id.
    func withKnownReqIds(_ messages: [Message]) throws -> [Message] {
        guard messages.contains(where: { $0.reqId.isEmpty && $0.isSent(by: userId) }) else { return messages }
        return try messages.map { message in
            var message = message
            message.reqId = try knownReqId(of: message)
            return message
        }
    }

    /// Messages of this device that reach the cache by another route than an arrival (a
    /// real-time edit, a change log, an edit's answer, a held real-time copy) resolve
    /// their outbox entries too: the service holds them, so they are neither pending nor
    /// failed. That happens when a send's answer was lost and its echo lacked the
    /// `reqId`; without this the message showed in the succeeded and the failed list at
    /// once (found by the soak).
    func resolveOwnUpdates(_ messages: [Message], in channelURL: String) throws {
        let carrying = messages.filter { !$0.reqId.isEmpty }
        guard !carrying.isEmpty else { return }
        let waiting = Set(try store.outboxEntries(channelURL: channelURL).map(\.reqId))
        for var message in carrying where waiting.contains(message.reqId) { try resolveArrival(&message) }
    }

    /// Checks, in the background, an answer that waits for its echo but may repeat what an
    /// earlier attempt stored (its response lost, or the app killed): that message may
    /// have been deleted before this connection began, so that no event told of it and its
    /// echo never comes. One look-up by request id settles it; while it is out, the lane
    /// goes on and an echo still resolves the message. A look-up left unanswered is asked
    /// again after 1, 2, 4 … 30 s on the injected clock, while the echo is awaited in the
    /// same connection (soak seed 805: one lost look-up left a deleted message waiting for
    /// good); after ``syncRetryLimit`` tries, a newer message or a broken connection ends the wait.
    func checkAwaitedAnswerInBackground(_ sent: Message, attempt: Int = 0) {
        let epochAtStart = epoch
        let wait = attempt == 0 ? nil : retryWait(after: attempt - 1)
        runInBackground { engine in
            if let wait {
                do { try await wait() } catch { return }
            }
            await engine.checkAwaitedAnswer(sent, since: epochAtStart, attempt: attempt)
        }
    }

    /// Looks `sent` up unless it stopped waiting for its echo in the connection that began
    /// waiting. The check and the request start in one turn of the engine, so a connection
    /// lost and back in between cannot slip past the check.
    private func checkAwaitedAnswer(_ sent: Message, since epochAtStart: Int, attempt: Int) async {
        guard isStillAwaiting(sent, since: epochAtStart) else { return }
        let found: [Message]?
        do {
            found = try await requestUnlessTransient { try await $0.lookUpMessages(channelURL: sent.channelURL, reqIds: [sent.reqId]) }
        } catch {
            return  // refused for good: the echo, a newer message or a broken connection ends the wait
        }
        settleAwaitedAnswer(sent, found: found, attempt: attempt)
    }

    /// Whether `sent` still waits for its echo in the connection that began waiting.
    private func isStillAwaiting(_ sent: Message, since epochAtStart: Int) -> Bool {
        !isClosed && epoch == epochAtStart && outbox.awaitingEcho[sent.reqId]?.messageId == sent.messageId
    }

    private func settleAwaitedAnswer(_ sent: Message, found: [Message]?, attempt: Int) {
        guard outbox.awaitingEcho[sent.reqId]?.messageId == sent.messageId else { return }
        guard let found else {
            if attempt + 1 < Self.syncRetryLimit { checkAwaitedAnswerInBackground(sent, attempt: attempt + 1) }
            return
        }
        guard !found.contains(where: { $0.messageId == sent.messageId }) else { return }
        noteDeleted(channelURL: sent.channelURL, messageIds: [sent.messageId])
    }

    /// An awaited echo will not come: the connection broke, the message was deleted, or
    /// a newer message of its channel arrived first (the real-time stream is ordered, so
    /// the service no longer holds it). It leaves the pending and failed lists and is not
    /// cached; if the service does hold it after a broken connection, the next sync brings it.
    func stopAwaitingEcho(_ reqId: String) {
        guard let message = outbox.endAwaitingEcho(reqId) else { return }
        for view in views(of: message.channelURL) {
            view.removePending(reqId)
            view.removeFailed(reqId, reason: .removeResendSucceeded)
        }
    }

    /// Awaited echoes of `channelURL` that a real-time message at `key` overtook.
    func stopAwaitingEchoes(in channelURL: String, before key: MessageKey) {
        let overtaken = outbox.awaitingEcho.filter { $0.value.channelURL == channelURL && $0.value.sortKey < key }.keys
        for reqId in overtaken {
            logger.debug("the echo of \(reqId) did not come before a newer message of \(channelURL): no longer awaited")
            stopAwaitingEcho(reqId)
        }
    }

    /// The service deleted messages of `channelURL`: remembered for answers that name
    /// them later, and any echo of them awaited ends.
    func noteDeleted(channelURL: String, messageIds: [Int64]) {
        rememberDeletionsForAnswersInFlight(messageIds, in: channelURL)
        forgetSyncedLately(channelURL: channelURL, messageIds: messageIds)
        settleOperations(ofDeleted: messageIds, in: channelURL)
        guard !outbox.awaitingEcho.isEmpty else { return }
        let deleted = Set(messageIds)
        let ended = outbox.awaitingEcho.filter { $0.value.channelURL == channelURL && deleted.contains($0.value.messageId) }
        for (reqId, message) in ended {
            stopAwaitingEcho(reqId)
            // Its answer made it the channel's last message.
            noteChangedMessage(channelURL: channelURL, messageId: message.messageId, now: nil)
        }
    }

    /// The one way an entry leaves the outbox because the service has it: its row goes,
    /// every in-flight fact about it ends, and its observers see it synced (which ends
    /// their streams). The caller decides where the message is shown next.
    private func retire(_ reqId: String, as synced: Message, gone: Bool = false) throws {
        // Remembered on disk too, in the same transaction: after a relaunch no cached
        // range may hold it (its echo had not come, its channel was never viewed).
        let oldest = gone ? nil : outbox.recentlySynced.forgottenByRemembering(synced.reqId)
        try store.retireOutbox(reqId: reqId, remembering: gone ? nil : synced, forgetting: oldest)
        outbox.retire(synced, gone: gone)
        if !gone { inFlight[synced.channelURL]?.rememberedWhileAsked.insert(reqId) }
        observers.publish(synced)
    }
}
