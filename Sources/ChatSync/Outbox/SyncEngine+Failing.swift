// MARK: - Failing, resend policies and the failed list's limits

extension SyncEngine {
    // MARK: Failing

    /// Applies the resend policy to a message that could not be sent (Guarantees: Failure, retries and resend policy).
    ///
    /// - Parameter enforcingLimits: `false` when the caller fails many messages at once
    ///   and applies the failed-message limits once afterwards.
    func fail(_ entry: OutboxEntry, failure: SyncFailure, enforcingLimits: Bool = true) throws {
        var entry = entry
        let wasFailed = entry.isInFailedList
        failureWitness?(entry.reqId)
        // Under `.manual` every resend is the app's, also one whose in-memory note a
        // relaunch lost (failed by the relaunch's reconciliation).
        let manual = outbox.endAttempt(entry.reqId) || (wasFailed && options.messageResendPolicy == .manual)
        entry.message.syncState = .failed
        entry.message.failure = failure
        entry.message.uploadProgress = nil
        entry.attempts = 0
        if options.messageResendPolicy == .none && !wasFailed {
            try store.deleteOutbox(reqId: entry.reqId)
            outbox.forget(entry.reqId)
            observers.publish(entry.message)
            withdraw(entry, reason: .removeUnknown)
            return
        }
        if entry.failedAt == nil { entry.failedAt = now }
        let automatic = options.messageResendPolicy == .automatic && failure.isRetryable && entry.origin == .outbox
        if wasFailed && !manual { entry.resendAttempts += 1 }
        let resendsLeft = automatic && entry.resendAttempts < options.automaticMessageResendRetryCount
        let reason: FailedMessageEventActionReason
        if !wasFailed {
            reason = .none
        } else if manual || (automatic && !resendsLeft) {
            reason = .updateResendFailed
        } else {
            reason = .none
        }
        try save(entry, entering: !wasFailed, reason: reason)
        if resendsLeft { scheduleAutomaticResend(entry) }
        if enforcingLimits { try enforceFailedLimits(channelURL: entry.channelURL) }
    }

    /// Schedules again the automatic resends an earlier run of the app had pending: they
    /// lived in memory only, so without this a message failed just before the app was
    /// killed (or failed by relaunch reconciliation in a run that was killed within
    /// seconds) would wait in the failed list forever although its policy is automatic.
    /// Found by the crash-kill soak. Called once, on the first resume.
    func restoreAutomaticResends() {
        guard options.messageResendPolicy == .automatic else { return }
        do {
            for entry in try store.outboxEntries(states: [.failed])
            where entry.origin == .outbox && entry.message.failure?.isRetryable == true
                && entry.resendAttempts < options.automaticMessageResendRetryCount
            {
                scheduleAutomaticResend(entry)
            }
        } catch {
            logger.error("could not read the failed messages to resend: \(error)")
        }
    }

    /// Waits 2 s per resend already made (at most 10 s) on the injected clock, then
    /// puts the message at the end of its lane, unless the app resent it meanwhile or it
    /// failed again (each failure that leaves resends schedules its own).
    private func scheduleAutomaticResend(_ entry: OutboxEntry) {
        let delay = Duration.seconds(min(2 * (entry.resendAttempts + 1), 10))
        let reqId = entry.reqId
        let timer = outbox.startResendTimer(reqId)
        // The deadline is fixed now, when the failure is handled, not when the task starts.
        let wait = Self.sleeper(options.clock, for: delay)
        runInBackground { engine in
            do { try await wait() } catch { return }
            try? await engine.resendAutomatically(reqId: reqId, timer: timer)
        }
    }

    /// The automatic resend of `reqId` that `timer` waited for, if it is still the one
    /// the message waits for and the failure it follows is retryable: a timer that
    /// outlived the app's own resend used to send again a message that resend had seen
    /// refused for good, or soon after a newer failure (an adversarial review's finding;
    /// AutomaticResendTimersGeneratedTests).
    private func resendAutomatically(reqId: String, timer: Int) throws {
        guard outbox.endResendTimer(timer, of: reqId) else { return }
        guard try store.outboxEntry(reqId: reqId)?.message.failure?.isRetryable == true else { return }
        try requeue(reqId: reqId, manual: false)
    }

    /// A sleep until `delay` after now on `clock`, with the deadline taken at once.
    static func sleeper<C: Clock>(_ clock: C, for delay: Duration) -> @Sendable () async throws -> Void where C.Duration == Duration {
        let deadline = clock.now.advanced(by: delay)
        return { try await clock.sleep(until: deadline, tolerance: nil) }
    }

    /// Puts a failed message at the end of its lane to be sent again; it stays in the
    /// failed list while in flight.
    func requeue(reqId: String, manual: Bool) throws {
        guard !isClosed, var entry = try store.outboxEntry(reqId: reqId), entry.message.syncState == .failed else { return }
        if manual { outbox.noteManualResend(reqId) }
        try store.moveOutboxToLaneTail(reqId: reqId)
        entry.message.syncState = .created
        entry.attempts = 0
        try save(entry)
        kickLanes(entry.channelURL)
    }

    /// Keeps at most `maxFailedMessageCountPerChannel` failed messages (oldest go first)
    /// and none older than `failedMessageRetentionDays`; a resend in flight is left alone.
    func enforceFailedLimits(channelURL: String? = nil) throws {
        let oldestAllowed = now - Int64(options.failedMessageRetentionDays) * 86_400_000
        // One aggregate query finds the channels that need a closer look.
        let channelsOverLimits = try store.failedListStats(channelURL: channelURL).filter { stat in
            stat.count > options.maxFailedMessageCountPerChannel || stat.oldestFailedAt < oldestAllowed
        }
        for stat in channelsOverLimits { try enforceFailedLimits(in: stat.channelURL, oldestAllowed: oldestAllowed) }
    }

    private func enforceFailedLimits(in channelURL: String, oldestAllowed: Int64) throws {
        // Failed at rest only. A resend in flight neither counts nor goes: the service may
        // be storing it now and the app asked for it; were it to count, the message failing
        // beside it would be the one to go, at once. It counts again if its resend fails.
        var kept: [OutboxEntry] = []
        for entry in try store.outboxEntries(channelURL: channelURL, states: [.failed]) {
            if let failedAt = entry.failedAt, failedAt < oldestAllowed {
                try drop(entry, reason: .removeRetentionExpired)
            } else {
                kept.append(entry)
            }
        }
        guard kept.count > options.maxFailedMessageCountPerChannel else { return }
        let byAge = kept.sorted { ($0.failedAt ?? 0, $0.seq) < ($1.failedAt ?? 0, $1.seq) }
        for entry in byAge.prefix(kept.count - options.maxFailedMessageCountPerChannel) {
            try drop(entry, reason: .removeExceededMaxCount)
        }
    }

    /// Removes an entry from the outbox and the views.
    func drop(_ entry: OutboxEntry, reason: FailedMessageEventActionReason) throws {
        try store.deleteOutbox(reqId: entry.reqId)
        if reason == .removeExceededMaxCount || reason == .removeRetentionExpired { limitDropWitness?(entry.reqId) }
        outbox.forget(entry.reqId)
        withdraw(entry, reason: reason)
    }
}
