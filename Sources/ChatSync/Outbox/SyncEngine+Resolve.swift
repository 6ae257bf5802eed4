// MARK: - Resolving: a message of this device is on the service, and leaves the outbox

extension SyncEngine {

    /// A message of this device is stored on the server: it leaves the outbox and,
    /// where that keeps views contiguous, enters the succeeded lists.
    func resolveSent(reqId: String, sent: Message) throws {
        let sent = sent.asSynced
        guard let entry = try store.outboxEntry(reqId: reqId) else { return }  // resolved (by its echo) or cancelled
        try retire(reqId, as: sent)
        noteNewMessage(sent)
        let channelURL = sent.channelURL
        if let live = channels[channelURL]?.liveEdge, sent.sortKey > live {
            // Its real-time echo will place it; until then it stays where it is shown.
            outbox.awaitingEcho[reqId] = sent
            return
        }
        withdraw(entry, reason: .removeResendSucceeded)
        if try isInCompleteRange(sent.sortKey, in: channelURL) {
            try store.upsertMessages([sent])
            refreshViews(channelURL, with: [sent])
        }
    }

    /// A message arrived from the service (real time or sync): if it is one of ours still
    /// in the outbox, or awaiting its echo, it is resolved now. Removals come first; the
    /// caller inserts it where it belongs. Many services echo a message without its
    /// request id: an awaited echo is also recognised by its id, and gets its request id back.
    func resolveArrival(_ message: inout Message) throws {
        if message.reqId.isEmpty, !outbox.awaitingEcho.isEmpty {
            let id = (message.channelURL, message.messageId)
            if let reqId = outbox.awaitingEcho.first(where: { ($0.value.channelURL, $0.value.messageId) == id })?.key {
                message.reqId = reqId
            }
        }
        guard !message.reqId.isEmpty else { return }
        // A request id names a message within one channel: the same id elsewhere, or on
        // another message, is not this device's echo (a confused or hostile service).
        if let awaited = outbox.awaitingEcho[message.reqId], awaited.channelURL == message.channelURL,
            awaited.messageId == message.messageId
        {
            outbox.awaitingEcho[message.reqId] = nil
            for view in views(of: message.channelURL) {
                view.removePending(message.reqId)
                view.removeFailed(message.reqId, reason: .removeResendSucceeded)
            }
            return
        }
        guard let entry = try store.outboxEntry(reqId: message.reqId), entry.channelURL == message.channelURL else { return }
        try retire(message.reqId, as: message.asSynced)
        withdraw(entry, reason: .removeResendSucceeded)
    }

    /// The one way an entry leaves the outbox because the service has it: its row goes,
    /// every in-flight fact about it ends, and its observers see it synced (which ends
    /// their streams). The caller decides where the message is shown next.
    private func retire(_ reqId: String, as synced: Message) throws {
        try store.deleteOutbox(reqId: reqId)
        outbox.retire(synced)
        observers.publish(synced)
    }
}
