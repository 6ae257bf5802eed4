// MARK: - Sends that may be stored: asked about by request id before and after they fail

extension SyncEngine {
    /// Fails a send after a transient error, unless the service holds it: an attempt
    /// whose answer was lost may have stored it. With a service whose echoes leave the
    /// request id out, an echo that came before the lost answer shows as a succeeded
    /// message of its own, and the failed message (or, under `.none`, one reported
    /// dropped) stood beside it although the service held it (an adversarial tester
    /// found it). One look-up by request id settles it while online; unanswered, the
    /// message fails and the look-up is asked again in the background
    /// (``confirmStoredSendsInBackground(in:attempt:)``), and at the next connection.
    func failUnlessStored(_ entry: OutboxEntry, failure: SyncFailure) async throws {
        guard entry.mayBeStored, isOnline else { return try fail(entry, failure: failure) }
        let reqId = entry.reqId
        let channelURL = entry.channelURL
        let found = try? await requestUnlessTransient { try await $0.lookUpMessages(channelURL: channelURL, reqIds: [reqId]) }
        // Anything may have happened meanwhile: its echo resolved it, or the manager closed.
        guard !isClosed, var current = try store.outboxEntry(reqId: reqId) else { return }
        if let stored = Self.stored(reqId, in: channelURL, among: found) { return try resolveSent(current, sent: stored) }
        current.message.uploadProgress = nil
        try fail(current, failure: failure)
        if found == nil, isOnline { confirmStoredSendsInBackground(in: channelURL) }
    }

    /// Asks, at each connection and before the lanes resend anything, about the failed
    /// messages that an attempt may have stored: those the service holds are sent, and
    /// leave the failed lists. What goes unanswered waits for the next connection.
    func confirmFailedSends() async {
        let failed = ((try? store.outboxEntries()) ?? []).filter { $0.isInFailedList && $0.mayBeStored }
        for channelURL in Set(failed.map(\.channelURL)).sorted() {
            guard isOnline, !isClosed else { return }
            _ = await confirmStoredSends(in: channelURL)
        }
    }

    /// An echo of the user's that nothing here names arrived in `channelURL`: the
    /// channel's failed sends that may be stored are asked about, in the background. The
    /// echo of one whose answer was lost may come only after it failed (events held up on
    /// the way), and nothing else would ask before the next connection (the outbox model
    /// generator, with echoes that leave the request id out). An unanswered look-up is
    /// asked again after 1, 2, 4 … 30 s on the injected clock, at most ``syncRetryLimit``
    /// times, while the connection lasts; one chain per channel.
    func confirmStoredSendsInBackground(in channelURL: String, attempt: Int = 0) {
        guard attempt > 0 || outbox.confirmingStored.insert(channelURL).inserted else { return }
        let epochAtStart = epoch
        let wait = attempt == 0 ? nil : retryWait(after: attempt - 1)
        runInBackground { engine in
            if let wait {
                do { try await wait() } catch {
                    await engine.endConfirmingStored(in: channelURL)
                    return
                }
            }
            await engine.confirmStoredSends(in: channelURL, since: epochAtStart, attempt: attempt)
        }
    }

    private func confirmStoredSends(in channelURL: String, since epochAtStart: Int, attempt: Int) async {
        guard !isClosed, isOnline, epoch == epochAtStart else { return endConfirmingStored(in: channelURL) }
        let answered = await confirmStoredSends(in: channelURL)
        guard !answered, !isClosed, isOnline, epoch == epochAtStart, attempt + 1 < Self.syncRetryLimit else {
            return endConfirmingStored(in: channelURL)
        }
        confirmStoredSendsInBackground(in: channelURL, attempt: attempt + 1)
    }

    private func endConfirmingStored(in channelURL: String) { outbox.confirmingStored.remove(channelURL) }

    /// Looks up the channel's failed sends that may be stored, 100 at a time; those the
    /// service holds are sent. Answers `false` when a look-up went unanswered (or was refused).
    private func confirmStoredSends(in channelURL: String) async -> Bool {
        let entries = ((try? store.outboxEntries(channelURL: channelURL)) ?? []).filter { $0.isInFailedList && $0.mayBeStored }
        let reqIds = entries.map(\.reqId)
        for start in stride(from: 0, to: reqIds.count, by: 100) {
            let batch = Array(reqIds[start..<min(start + 100, reqIds.count)])
            let found = try? await requestUnlessTransient { try await $0.lookUpMessages(channelURL: channelURL, reqIds: batch) }
            guard let found, !isClosed else { return false }
            for reqId in batch {
                // Still failed: not resolved, cancelled or resent meanwhile.
                guard let stored = Self.stored(reqId, in: channelURL, among: found),
                    let current = try? store.outboxEntry(reqId: reqId), current.message.syncState == .failed
                else { continue }
                do { try resolveSent(current, sent: stored) } catch { logger.error("could not settle \(reqId): \(error)") }
            }
        }
        return true
    }

    /// The message a look-up found for `reqId`, if it describes a stored message of that channel.
    private static func stored(_ reqId: String, in channelURL: String, among found: [Message]?) -> Message? {
        found?.first { $0.reqId == reqId && $0.channelURL == channelURL && $0.messageId > 0 }
    }
}
