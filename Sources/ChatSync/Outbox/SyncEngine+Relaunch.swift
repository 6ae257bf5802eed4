// MARK: - Relaunch reconciliation (Guarantees: Relaunch)

extension SyncEngine {
    /// Asks the service, by request id and in batches of 100 per channel, about the
    /// messages that were in flight when the app last stopped and those the host
    /// appended: found ones become succeeded, the others fail with a retryable failure
    /// and follow the resend policy.
    ///
    /// A look-up the service did not answer (a transient failure) is asked again after
    /// 1, 2, 4 … 30 s on the injected clock, as long as the connection lasts. The lanes
    /// wait behind a message whose fate is unknown, so this must end: after
    /// ``syncRetryLimit`` unanswered tries the messages still unknown fail as if not
    /// found (retryable), and their resend policy takes over. Resending is safe: the
    /// service answers a repeated request id with what it stored (Guarantees: Exactly once).
    func reconcileRelaunch(attempt: Int = 0) async {
        guard isOnline, !outbox.awaitingReconciliation.isEmpty else { return }
        let epochAtStart = epoch
        if await lookUpAwaited() { return }
        guard isOnline, !isClosed, epoch == epochAtStart else { return }  // the next connection asks again
        if attempt + 1 >= Self.syncRetryLimit {
            logger.warning("the service did not answer \(attempt + 1) look-ups of messages in flight at the last stop")
            failUnknown()
            kickLanes()
            return
        }
        let wait = retryWait(after: attempt)
        runInBackground { engine in
            do { try await wait() } catch { return }
            await engine.retryReconcileRelaunch(attempt: attempt + 1, epoch: epochAtStart)
        }
    }

    /// A retry of the look-ups of connection `epoch`: it stops when that connection was
    /// lost since (the next connection asks again, with a chain of its own). The check
    /// runs on the engine with the look-up it guards; before, a retry checked the epoch
    /// in one hop and looked up in the next, so a connection lost and back in between
    /// ran the old chain beside the new one: up to twice the look-ups.
    private func retryReconcileRelaunch(attempt: Int, epoch epochAtStart: Int) async {
        guard epoch == epochAtStart else { return }
        await reconcileRelaunch(attempt: attempt)
        kickLanes()
    }

    /// One pass over the awaited messages; answers `false` when a look-up was not answered.
    private func lookUpAwaited() async -> Bool {
        let entries = ((try? store.outboxEntries()) ?? []).filter { outbox.awaitingReconciliation.contains($0.reqId) }
        let byChannel = Dictionary(grouping: entries, by: \.channelURL)
        for channelURL in byChannel.keys.sorted() {
            let channelEntries = byChannel[channelURL] ?? []
            for start in stride(from: 0, to: channelEntries.count, by: 100) {
                guard isOnline else { return false }
                let batch = Array(channelEntries[start..<min(start + 100, channelEntries.count)])
                let reqIds = batch.map(\.reqId)
                do {
                    let endMark = historyDrops.endMark(channelURL)
                    guard
                        let found = try await requestUnlessTransient({ try await $0.lookUpMessages(channelURL: channelURL, reqIds: reqIds) }
                        )
                    else { return false }
                    try settleLookUp(batch, found: found, channelEnded: historyDrops.endMark(channelURL) != endMark)
                } catch {
                    // The service refused for good (the channel is gone, or the user left it).
                    let failure = ChatServiceError.classify(error).failure
                    try? store.batched {
                        for entry in batch { try? settle(entry, found: nil, failure: failure) }
                    }
                }
                // Once per batch rather than once per failed message: each pass reads the channel's outbox.
                try? enforceFailedLimits(channelURL: channelURL)
            }
        }
        return true
    }

    /// Fails every message still awaiting reconciliation, as not found.
    private func failUnknown() {
        let entries = ((try? store.outboxEntries()) ?? []).filter { outbox.awaitingReconciliation.contains($0.reqId) }
        try? store.batched {
            for entry in entries { try? settle(entry, found: nil, failure: Self.unconfirmedFailure) }
        }
        try? enforceFailedLimits()
    }

    /// The failure of a message whose send the service never confirmed before the app stopped.
    static let unconfirmedFailure = SyncFailure(
        code: ChatServiceError.Code.unconfirmed.rawValue, message: "the app stopped before the service confirmed this message",
        isRetryable: true)

    /// `channelEnded`: the channel was deleted or left while the look-up was out, so what
    /// it found went with the channel.
    private func settleLookUp(_ batch: [OutboxEntry], found: [Message], channelEnded: Bool) throws {
        let byReqId = Dictionary(found.map { ($0.reqId, $0) }, uniquingKeysWith: { first, _ in first })
        // One commit for the batch: a relaunch after a crash may settle thousands of rows.
        try store.batched {
            for entry in batch {
                try settle(entry, found: byReqId[entry.reqId], failure: Self.unconfirmedFailure, channelEnded: channelEnded)
            }
        }
    }

    private func settle(_ entry: OutboxEntry, found: Message?, failure: SyncFailure, channelEnded: Bool = false) throws {
        guard outbox.awaitingReconciliation.remove(entry.reqId) != nil, let current = try store.outboxEntry(reqId: entry.reqId)
        else { return }
        if let found, found.channelURL == current.channelURL, found.messageId > 0 {
            try resolveSent(current, sent: found, channelEnded: channelEnded)
        } else {
            try fail(current, failure: failure, enforcingLimits: false)
        }
    }
}
