// MARK: - Relaunch reconciliation (§4.5)

extension SyncEngine {
    /// Asks the service, by request id and in batches of 100 per channel, about the
    /// messages that were in flight when the app last stopped and those the host
    /// appended: found ones become succeeded, the others fail with a retryable failure
    /// and follow the resend policy. A transient failure leaves them for the next
    /// connection.
    func reconcileRelaunch() async {
        guard isOnline, !awaitingReconciliation.isEmpty else { return }
        let entries = ((try? store.outboxEntries()) ?? []).filter { awaitingReconciliation.contains($0.reqId) }
        let byChannel = Dictionary(grouping: entries, by: \.channelURL)
        for channelURL in byChannel.keys.sorted() {
            let channelEntries = byChannel[channelURL] ?? []
            for start in stride(from: 0, to: channelEntries.count, by: 100) {
                guard isOnline else { return }
                let batch = Array(channelEntries[start..<min(start + 100, channelEntries.count)])
                let reqIds = batch.map(\.reqId)
                do {
                    guard let found = try await request({ try await $0.lookUpMessages(channelURL: channelURL, reqIds: reqIds) })
                    else { return }
                    try settleLookUp(batch, found: found)
                } catch {
                    // The service refused for good (the channel is gone, or the user left it).
                    let failure = ChatServiceError.classify(error).failure
                    for entry in batch { try? settle(entry, found: nil, failure: failure) }
                }
                // Once per batch rather than once per failed message: each pass reads the channel's outbox.
                try? enforceFailedLimits(channelURL: channelURL)
            }
        }
    }

    private func settleLookUp(_ batch: [OutboxEntry], found: [Message]) throws {
        let byReqId = Dictionary(found.map { ($0.reqId, $0) }, uniquingKeysWith: { first, _ in first })
        let failure = SyncFailure(
            code: -4, message: "the app stopped before the service confirmed this message", isRetryable: true)
        for entry in batch { try settle(entry, found: byReqId[entry.reqId], failure: failure) }
    }

    private func settle(_ entry: OutboxEntry, found: Message?, failure: SyncFailure) throws {
        guard awaitingReconciliation.remove(entry.reqId) != nil, let current = try store.outboxEntry(reqId: entry.reqId)
        else { return }
        if let found, found.channelURL == current.channelURL, found.messageId > 0 {
            try resolveSent(reqId: current.reqId, sent: found)
        } else {
            try fail(current, failure: failure, enforcingLimits: false)
        }
    }
}
