/// When the reconnect sync of the current connection runs: one pass at a time, and at
/// most one retry waiting, whatever asked for it (the connection's return, a fetch whose
/// change logs were not answered, a catch-up that was not). Before, each of those
/// started a chain of retries of its own, and their passes ran side by side, asking the
/// service the same things (the soak saw passes of one connection overlap in 60 of 100
/// schedules).
///
/// A request while a pass runs is kept for that pass's end (the pass may have gone past
/// what failed, so another follows). A request while a retry waits leaves the wait as it
/// is, since the pass it leads to covers the request; if that pass is incomplete, the
/// count of retries starts over from the request's attempt. So a stream of failing
/// fetches never postpones a retry that is due, and a later fetch still earns the whole
/// series of retries. A pass during which the sync got further ends with its count
/// started over too (see ``SyncReach``).
struct SyncPassSchedule {
    /// The connection the state below belongs to; another one's requests start afresh.
    private(set) var epoch = -1
    private var isRunning = false
    /// Whether work the service's events started failed while the pass ran (see
    /// ``joinChain(epoch:)``): the pass then ends as one that did not complete.
    private var joinedWhileRunning = false
    /// The lowest attempt asked for while a pass ran.
    private var askedWhileRunning: Int?
    /// The lowest attempt asked for while a retry waited.
    private var askedWhileWaiting: Int?
    /// The number of the retry that waits, if any.
    private var waitingTicket: Int?
    private var tickets = 0
    /// Whether this connection's last chain of retries ran out without completing: nothing
    /// is retried until a fetch, a catch-up, a resume or a reconnect asks again (a real-time
    /// message restarts the catch-up of views left behind, see `SyncEngine.applyReceived`).
    /// ``gaveUpCount`` (chains run out since the manager opened) only tests read.
    private(set) var gaveUp = false
    private(set) var gaveUpCount = 0
    /// The channels with views that were not proven live when the chain ran out (only
    /// tests read it).
    private(set) var leftUnproven: Set<String> = []

    /// A pass of connection `connected` (after `attempt` retries) wants to run: answers
    /// whether it may, or leaves it to the running pass's end (which then asks for the
    /// retry that runs as this pass would have).
    mutating func startPass(epoch connected: Int, attempt: Int) -> Bool {
        enter(connected)
        guard !isRunning else {
            ask(&askedWhileRunning, max(attempt - 1, 0))
            return false
        }
        isRunning = true
        return true
    }

    /// The pass of connection `connected` (after `attempt` retries) ended: answers the
    /// attempt whose retry to ask for, if any.
    mutating func endPass(epoch connected: Int, attempt: Int, complete: Bool) -> Int? {
        guard connected == epoch else { return nil }  // a later connection's state replaced this one's
        isRunning = false
        let complete = complete && !joinedWhileRunning
        defer {
            askedWhileRunning = nil
            askedWhileWaiting = nil
            joinedWhileRunning = false
        }
        var next = complete ? nil : min(attempt, askedWhileWaiting ?? attempt)
        if let asked = askedWhileRunning { next = min(next ?? asked, asked) }
        return next
    }

    /// A retry after `attempt` is asked for in connection `connected`: answers the ticket
    /// its wait carries, or `nil` when a pass runs or a retry waits already (see above).
    mutating func requestRetry(epoch connected: Int, attempt: Int) -> Int? {
        enter(connected)
        gaveUp = false
        leftUnproven = []
        if isRunning {
            ask(&askedWhileRunning, attempt)
            return nil
        }
        if waitingTicket != nil {
            ask(&askedWhileWaiting, attempt)
            return nil
        }
        tickets += 1
        waitingTicket = tickets
        return tickets
    }

    /// Work of connection `connected` that the service's events started (a catch-up on
    /// a real-time message), not the app, failed: it joins the chain without starting its
    /// count over. Answers `true` when the chain takes it, and `false` when no chain goes
    /// on, so that it starts one. The running pass then ends as incomplete (its progress,
    /// or the lack of it, decides the count, as for a failure of its own: the work may
    /// have held a channel the pass skipped); a waiting retry's pass covers it. Before,
    /// such work asked at attempt 0 like a fetch, and on a busy channel whose requests
    /// failed each message began the count again: the retries never ended.
    mutating func joinChain(epoch connected: Int) -> Bool {
        enter(connected)
        if isRunning {
            joinedWhileRunning = true
            return true
        }
        return waitingTicket != nil
    }

    /// The wait with `ticket` of connection `connected` is over: answers whether its
    /// retry runs (the connection is still the one it waited in).
    mutating func retryIsDue(epoch connected: Int, ticket: Int) -> Bool {
        guard connected == epoch, waitingTicket == ticket else { return false }
        waitingTicket = nil
        return true
    }

    /// The chain of connection `connected` ran out: its last retry allowed ended incomplete.
    mutating func noteGaveUp(epoch connected: Int, leftUnproven unproven: Set<String>) {
        enter(connected)
        gaveUp = true
        gaveUpCount += 1
        leftUnproven = unproven
    }

    private func ask(_ lowest: inout Int?, _ attempt: Int) { lowest = min(lowest ?? attempt, attempt) }

    /// Starts afresh for a new connection; tickets keep counting, so an old wait never matches.
    private mutating func enter(_ connected: Int) {
        guard connected != epoch else { return }
        epoch = connected
        isRunning = false
        joinedWhileRunning = false
        askedWhileRunning = nil
        askedWhileWaiting = nil
        waitingTicket = nil
        gaveUp = false
        leftUnproven = []
    }
}
