// MARK: - Messages the host sends through its own SDK (Guarantees: Host-sent messages)

extension SyncEngine {
    func appendHostMessage(_ message: Message, toViewOf id: Int) throws {
        let view = try view(id)
        try Self.checkKey(message.reqId, named: "an appended message's reqId")
        guard message.channelURL == view.channelURL else {
            throw SyncManagerError(.invalidParameter, "the message belongs to \(message.channelURL), not \(view.channelURL)")
        }
        guard message.syncState.isPending else {
            throw SyncManagerError(.invalidParameter, "only a pending message can be appended (it is \(message.syncState))")
        }
        // The user's own message: the pending lists and the resend policy are the user's,
        // and its echo, from someone else, would be no echo of it.
        guard message.senderId.isEmpty || message.isSent(by: userId) else {
            throw SyncManagerError(.invalidParameter, "an appended message is the user's own, not \(message.senderId)'s")
        }
        // The host's SDK may have sent it before the app appended it, and its echo (or a
        // sync) come first: it shows as succeeded already, and a pending copy would list it
        // twice and wait for an echo that came. Nothing is added.
        if let cached = try store.message(reqId: message.reqId), cached.channelURL == message.channelURL {
            _ = outbox.takeHostAnswer(message.reqId)
            return
        }
        // The host handed over the answer first: shown as pending, then resolved with it
        // at once (it waits for its echo where that keeps the views contiguous).
        let early = outbox.takeHostAnswer(message.reqId).flatMap { $0.message.channelURL == message.channelURL ? $0 : nil }
        if early == nil, let known = outbox.awaitingEcho[message.reqId] ?? outbox.recentlySynced[message.reqId],
            known.channelURL == message.channelURL
        {
            return
        }
        var pending = message
        if pending.senderId.isEmpty { pending.senderId = userId }
        let entry = try store.insertOutbox(OutboxEntry(message: pending, origin: .host))
        outbox.noteHostAppend(entry.reqId, endMark: historyDrops.endMark(entry.channelURL))
        outbox.noteListed(channelURL: entry.channelURL, createdAt: entry.message.createdAt)
        present(entry, entering: true)
        if let early {
            // Handed over after its channel ended: it went with the channel.
            try resolveSent(entry, sent: early.message, channelEnded: historyDrops.endMark(entry.channelURL) != early.endMark)
        }
    }

    func handleHostResponse(_ message: Message?, error: (any Error)?) {
        guard !isClosed, let message, !message.reqId.isEmpty else {
            logger.warning("handleSendMessageResponse needs the message with its reqId; ignored")
            return
        }
        do {
            if let error {
                guard let entry = try store.outboxEntry(reqId: message.reqId), entry.message.syncState != .failed else { return }
                try fail(entry, failure: ChatServiceError.classify(error).failure)
            } else if message.messageId > 0 {
                guard try store.outboxEntry(reqId: message.reqId) != nil else {
                    // Answered before the app appended it (or after it was resolved or
                    // removed): kept for the append, which resolves with it at once.
                    outbox.keepHostAnswer(message.asSynced, endMark: historyDrops.endMark(message.channelURL))
                    return
                }
                // Handed over after its channel ended: it went with the channel.
                let ended = historyDrops.endMark(message.channelURL) != outbox.hostEndMark(message.reqId)
                try resolveSent(reqId: message.reqId, sent: message, channelEnded: ended)
            } else {
                logger.warning("handleSendMessageResponse: a sent message needs its messageId; ignored \(message.reqId)")
            }
        } catch {
            logger.error("could not apply the host's send response for \(message.reqId): \(error)")
        }
    }

    func updateHostMessage(_ message: Message) throws {
        try checkOpen()
        guard message.messageId > 0 else {
            throw SyncManagerError(.invalidParameter, "only a succeeded message can be updated")
        }
        try Self.checkKey(message.channelURL, named: "the message's channelURL")
        applyUpdated([message.asSynced])
    }

    func deleteHostMessage(_ message: Message) throws {
        try checkOpen()
        if message.messageId > 0 {
            try Self.checkKey(message.channelURL, named: "the message's channelURL")
            applyDeleted(channelURL: message.channelURL, messageIds: [message.messageId])
        } else if let entry = try store.outboxEntry(reqId: message.reqId) {
            try drop(entry, reason: .removeManualAction)
        } else {
            throw SyncManagerError(.invalidParameter, "no message with reqId '\(message.reqId)' to delete")
        }
    }
}
