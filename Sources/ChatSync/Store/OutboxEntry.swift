/// A message in the outbox (pending or failed) with the bookkeeping of its sending.
struct OutboxEntry: Sendable, Hashable {
    /// Who sends it: ChatSync itself, or the host through its own SDK (Guarantees: Host-sent messages),
    /// in which case ChatSync only resolves it and never sends it.
    enum Origin: String, Sendable {
        case outbox
        case host
    }

    /// The message as the app sees it; `syncState` is its outbox state.
    var message: Message
    /// Global creation order; FIFO inside a lane follows it. Assigned on insert.
    var seq: Int64
    var origin: Origin
    /// Send attempts spent on transient errors in the current round.
    var attempts: Int
    /// Automatic resends spent.
    var resendAttempts: Int
    /// When it failed (ms since 1970), for retention.
    var failedAt: Int64?
    /// The app corrected its text after an attempt may have reached the service; an
    /// answer with the earlier text is then followed by an edit.
    var textCorrected: Bool
    /// A send request for it went out, answered or not: the service may hold it, so it
    /// can no longer be cancelled (API §4.6). Kept across relaunches, and after a refusal
    /// for good too: an earlier attempt, its answer lost, may have stored it. A failed
    /// message stays cancellable whatever it says.
    var mayBeStored: Bool

    init(
        message: Message, seq: Int64 = 0, origin: Origin = .outbox, attempts: Int = 0, resendAttempts: Int = 0,
        failedAt: Int64? = nil, textCorrected: Bool = false, mayBeStored: Bool = false
    ) {
        self.message = message
        self.seq = seq
        self.origin = origin
        self.attempts = attempts
        self.resendAttempts = resendAttempts
        self.failedAt = failedAt
        self.textCorrected = textCorrected
        self.mayBeStored = mayBeStored
    }

    /// Which collection list shows it: the failed list once it failed, including
    /// while a resend of it is in flight; the pending list before that.
    var isInFailedList: Bool { message.syncState == .failed || failedAt != nil }

    var reqId: String { message.reqId }
    var channelURL: String { message.channelURL }
    var lane: SendLane { message.kind.lane }
}
