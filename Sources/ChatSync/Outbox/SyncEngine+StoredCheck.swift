// MARK: - Sends whose answer was lost: asked about by request id before and after they fail

extension SyncEngine {
    /// Fails a send after a transient error, unless the service holds it. An answer lost on
    /// its way (a timeout, or an answer that made no sense) leaves it unknown whether the
    /// service stored the message. With a service whose echoes leave the request id out, an
    /// echo that came before the lost answer shows as a succeeded message of its own, and
    /// the failed message (or, under `.none`, one reported dropped) stood beside it although
    /// the service held it (an adversarial tester found it). One look-up by request id
    /// settles it while online; unanswered, the message fails and is asked about again in
    /// the background (``confirmStoredSendsInBackground(in:attempt:continuing:)``) and at each connection.
    func failUnlessStored(_ entry: OutboxEntry, failure: SyncFailure) async throws {
        // The last try's failure, or an earlier try's: a send whose first answer was lost
        // and whose last try was refused (a 503) may be held as well (with an echo that
        // leaves the request id out, it stood failed beside it: outbox model seed 25).
        guard entry.mayBeStored, Self.answerMayBeLost(failure) || outbox.mayHaveLostAnswer(entry.reqId), isOnline else {
            return try fail(entry, failure: failure)
        }
        let channelURL = entry.channelURL
        let looked = await lookUp([entry.reqId], in: channelURL)
        // Anything may have happened meanwhile: its echo resolved it, or the manager closed.
        guard !isClosed, let current = try store.outboxEntry(reqId: entry.reqId) else { return }
        if case .found(let found, let channelEnded) = looked, let stored = found[entry.reqId] {
            return try resolveSent(current, sent: stored, channelEnded: channelEnded)
        }
        try fail(current, failure: failure)
        if case .unanswered = looked, isOnline { confirmStoredSendsInBackground(in: channelURL, attempt: 1) }
    }

    /// At each connection, the failed messages whose answer was lost are asked about, in
    /// the background: those the service holds are sent, and leave the failed lists.
    func confirmFailedSends() {
        let failed = ((try? store.outboxEntries(states: [.failed])) ?? []).filter(mayBeStoredFailure)
        for channelURL in Set(failed.map(\.channelURL)).sorted() { confirmStoredSendsInBackground(in: channelURL) }
    }

    /// Asks about the channel's failed sends whose answer was lost, in the background:
    /// after a send failed with its look-up unanswered (from `attempt` 1, after a wait), at a
    /// connection, and when an echo of the user's that nothing names arrives (the echo of
    /// one may come only after it failed, events held up on the way, and nothing else would
    /// ask before the next connection: the outbox model generator, with echoes that leave
    /// the request id out). An unanswered look-up is asked again after 1, 2, 4 … 30 s on the
    /// injected clock, at most ``syncRetryLimit`` times, while the connection lasts; one
    /// chain per channel (`continuing`: the chain's own next try), and a new connection's
    /// takes over from an older one.
    func confirmStoredSendsInBackground(in channelURL: String, attempt: Int = 0, continuing: Bool = false) {
        let connection = epoch
        guard continuing || outbox.confirmingStored[channelURL] != connection else { return }
        outbox.confirmingStored[channelURL] = connection
        let wait = attempt == 0 ? nil : retryWait(after: attempt - 1)
        runInBackground { engine in
            if let wait {
                do { try await wait() } catch {
                    await engine.endConfirmingStored(in: channelURL, connection: connection)
                    return
                }
            }
            await engine.confirmStoredSends(in: channelURL, connection: connection, attempt: attempt)
        }
    }

    private func confirmStoredSends(in channelURL: String, connection: Int, attempt: Int) async {
        guard !isClosed, isOnline, epoch == connection, outbox.confirmingStored[channelURL] == connection else {
            return endConfirmingStored(in: channelURL, connection: connection)
        }
        let answered = await lookUpFailedSends(in: channelURL)
        guard !answered, !isClosed, isOnline, epoch == connection, attempt + 1 < Self.syncRetryLimit else {
            return endConfirmingStored(in: channelURL, connection: connection)
        }
        confirmStoredSendsInBackground(in: channelURL, attempt: attempt + 1, continuing: true)
    }

    /// Ends a chain of `connection`, unless a newer connection's took the channel over.
    private func endConfirmingStored(in channelURL: String, connection: Int) {
        if outbox.confirmingStored[channelURL] == connection { outbox.confirmingStored[channelURL] = nil }
    }

    /// Looks up the channel's failed sends whose answer was lost, 100 at a time; those the
    /// service holds are sent. Answers `false` when a look-up went unanswered.
    private func lookUpFailedSends(in channelURL: String) async -> Bool {
        let reqIds = ((try? store.outboxEntries(channelURL: channelURL, states: [.failed])) ?? []).filter(mayBeStoredFailure)
            .map(\.reqId)
        for start in stride(from: 0, to: reqIds.count, by: 100) {
            let batch = Array(reqIds[start..<min(start + 100, reqIds.count)])
            switch await lookUp(batch, in: channelURL) {
            case .unanswered: return false
            case .refused: return true  // the channel is gone, or not the user's: nothing to learn
            case .found(let found, let channelEnded):
                guard !isClosed else { return true }
                for reqId in batch where !outbox.wasAttempted(reqId) { outbox.noteEarlierRunFailureAsked(reqId) }
                for reqId in batch {
                    // Still failed: not resolved, cancelled or resent meanwhile.
                    guard let stored = found[reqId], let current = try? store.outboxEntry(reqId: reqId),
                        current.message.syncState == .failed
                    else { continue }
                    do { try resolveSent(current, sent: stored, channelEnded: channelEnded) } catch {
                        logger.error("could not settle \(reqId): \(error)")
                    }
                }
            }
        }
        return true
    }

    /// What a look-up by request id told.
    private enum StoredLookUp {
        /// The stored messages found, by request id, and whether the channel ended (deleted
        /// or left) while the look-up was out, so that what it found went with it.
        case found([String: Message], channelEnded: Bool)
        case unanswered
        case refused
    }

    private func lookUp(_ reqIds: [String], in channelURL: String) async -> StoredLookUp {
        let endMark = historyDrops.endMark(channelURL)
        do {
            guard let answer = try await requestUnlessTransient({ try await $0.lookUpMessages(channelURL: channelURL, reqIds: reqIds) })
            else { return .unanswered }
            let asked = Set(reqIds)
            var found: [String: Message] = [:]
            for message in answer where asked.contains(message.reqId) && message.channelURL == channelURL && message.messageId > 0 {
                found[message.reqId] = found[message.reqId] ?? message
            }
            return .found(found, channelEnded: historyDrops.endMark(channelURL) != endMark)
        } catch {
            return .refused
        }
    }

    /// Whether a send that failed with `failure` after its request went may be stored: its
    /// answer was lost (a timeout, or `.network`, which the HTTP services of Samples and
    /// Matrix throw for a connection that broke after the request went) or made no sense.
    /// A refusal the service answered stored nothing. Before `.network` counted, a message
    /// the service stored failed unasked when this run's later tries were refused (outbox
    /// model, seed + 160,000); it costs at most a look-up before a failure.
    static func answerMayBeLost(_ failure: SyncFailure) -> Bool {
        [ChatServiceError.Code.timeout, .network, .badResponse].map(\.rawValue).contains(failure.code)
    }

    /// Whether a failed entry may be held by the service: a request went, and its last
    /// answer was lost, or an earlier one was (see ``OutboxBookkeeping/mayHaveLostAnswer(_:)``).
    private func mayBeStoredFailure(_ entry: OutboxEntry) -> Bool {
        entry.mayBeStored && (entry.message.failure.map(Self.answerMayBeLost) == true || outbox.mayHaveLostAnswer(entry.reqId))
    }
}
