// MARK: - The app's calls on the outbox: resend, cancel, delete failed, look up, observe

extension SyncEngine {

    func resend(reqId: String) throws -> Message {
        try checkOpen()
        guard let entry = try store.outboxEntry(reqId: reqId), entry.message.syncState == .failed else {
            throw SyncManagerError(.invalidParameter, "no failed message with reqId '\(reqId)'")
        }
        guard entry.origin == .outbox else {
            throw SyncManagerError(.invalidParameter, "'\(reqId)' was sent by the host app; resend it through its SDK")
        }
        try requeue(reqId: reqId, manual: true)
        return try store.outboxEntry(reqId: reqId)?.message ?? entry.message
    }

    /// What a cancel refused because the service may hold the message says (tests match it).
    static let mayAlreadyHoldIt = "the service may already hold it"

    func cancel(reqId: String) throws {
        try checkOpen()
        let cancellable: Set<SyncState> = [.created, .uploading, .failed]
        guard let entry = try store.outboxEntry(reqId: reqId), cancellable.contains(entry.message.syncState)
        else {
            throw SyncManagerError(.invalidParameter, "only a waiting, uploading or failed message can be cancelled ('\(reqId)')")
        }
        // A request that went out may have stored it, its answer lost: cancelling would
        // only hide a message the service delivers (API §4.6, as for `.syncing`). A failed
        // message stays cancellable, as the contract says.
        guard entry.message.syncState == .failed || !entry.mayBeStored else {
            throw SyncManagerError(
                .invalidParameter,
                "'\(reqId)' was sent once and \(Self.mayAlreadyHoldIt): it can no longer be cancelled "
                    + "(wait for it to be sent, or to fail)")
        }
        try drop(entry, reason: .removeManualAction)
        outbox.cancelUpload(reqId)
    }

    func deleteFailed(reqId: String) throws {
        try checkOpen()
        guard let entry = try store.outboxEntry(reqId: reqId), entry.message.syncState == .failed else {
            throw SyncManagerError(.invalidParameter, "no failed message with reqId '\(reqId)'")
        }
        try drop(entry, reason: .removeManualAction)
    }

    func deleteAllFailed(channelURL: String?) throws {
        try checkOpen()
        for entry in try store.outboxEntries(channelURL: channelURL, states: [.failed]) {
            try drop(entry, reason: .removeManualAction)
        }
    }

    func message(reqId: String) -> Message? {
        guard !isClosed else { return nil }
        if let entry = try? store.outboxEntry(reqId: reqId) { return entry.message }
        let synced = (try? store.message(reqId: reqId)) ?? outbox.awaitingEcho[reqId] ?? outbox.recentlySynced[reqId]
        return synced.flatMap { pendingWrites.overlaid($0) }
    }

    func observe(reqId: String, _ continuation: AsyncStream<Message>.Continuation) {
        guard let current = message(reqId: reqId) else {
            continuation.finish()
            return
        }
        continuation.yield(current)
        if current.syncState == .synced {
            continuation.finish()
            return
        }
        let id = observers.add(reqId, continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.stopObserving(reqId, id) }
        }
    }

    private func stopObserving(_ reqId: String, _ id: Int) {
        observers.remove(reqId, id: id)
    }
}
