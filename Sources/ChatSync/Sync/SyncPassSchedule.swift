/// When the reconnect sync of the current connection runs: one pass at a time, and at
/// most one retry waiting, whatever asked for it (the connection's return, a fetch whose
/// change logs were not answered, a catch-up that was not). Before, each of those
/// started a chain of retries of its own, and their passes ran side by side, asking the
/// service the same things (the soak saw overlapping passes in 60 of 100 schedules).
///
/// A request while a pass runs is kept for that pass's end (the pass may have gone past
/// what failed); a request while a retry waits replaces it, so the wait starts over from
/// the request's attempt, as a later fetch always started over.
struct SyncPassSchedule {
    /// The connection the state below belongs to; another one's requests start afresh.
    private var epoch = -1
    private var isRunning = false
    /// The attempt to go on from once the running pass ends, when asked for meanwhile.
    private var rerunAttempt: Int?
    /// The number of the retry that waits, if any; a newer request replaces it.
    private var waitingTicket: Int?
    private var tickets = 0

    /// A pass of connection `connected` (after `attempt` retries) wants to run: answers
    /// whether it may, or leaves it to the running pass's end.
    mutating func startPass(epoch connected: Int, attempt: Int) -> Bool {
        enter(connected)
        guard !isRunning else {
            rerunAttempt = min(rerunAttempt ?? attempt, attempt)
            return false
        }
        isRunning = true
        return true
    }

    /// The pass of connection `connected` ended: answers the attempt whose retry to
    /// schedule, if any (the pass's own when incomplete, or the earliest one asked for
    /// while it ran).
    mutating func endPass(epoch connected: Int, attempt: Int, complete: Bool) -> Int? {
        guard connected == epoch else { return nil }  // a later connection's state replaced this one's
        isRunning = false
        defer { rerunAttempt = nil }
        if let rerunAttempt { return min(rerunAttempt, complete ? rerunAttempt : attempt) }
        return complete ? nil : attempt
    }

    /// A retry after `attempt` is asked for in connection `connected`: answers the ticket
    /// its wait carries, or `nil` when a pass runs (its end goes on from here).
    mutating func requestRetry(epoch connected: Int, attempt: Int) -> Int? {
        enter(connected)
        guard !isRunning else {
            rerunAttempt = min(rerunAttempt ?? attempt, attempt)
            return nil
        }
        tickets += 1
        waitingTicket = tickets
        return tickets
    }

    /// The wait with `ticket` of connection `connected` is over: answers whether its
    /// retry runs (not replaced by a newer one, nor by another connection).
    mutating func retryIsDue(epoch connected: Int, ticket: Int) -> Bool {
        guard connected == epoch, waitingTicket == ticket else { return false }
        waitingTicket = nil
        return true
    }

    /// Starts afresh for a new connection; tickets keep counting, so an old wait never matches.
    private mutating func enter(_ connected: Int) {
        guard connected != epoch else { return }
        epoch = connected
        isRunning = false
        rerunAttempt = nil
        waitingTicket = nil
    }
}
