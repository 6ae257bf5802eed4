import Testing

@testable import ChatSync

/// Work started by real-time messages (a catch-up) that fails joins the connection's
/// chain of sync retries without starting its count over, and is never dropped.
@Suite("Sync pass schedule: work that joins the chain")
struct SyncPassScheduleTests {
    @Test func noChainGoingOnMeansTheFailedWorkStartsOne() {
        var schedule = SyncPassSchedule()
        let joined = schedule.joinChain(epoch: 1)
        #expect(!joined)
    }

    @Test func aWaitingRetryCoversTheFailedWorkAndKeepsItsAttempt() throws {
        var schedule = SyncPassSchedule()
        _ = schedule.startPass(epoch: 1, attempt: 3)
        let retryAfter = schedule.endPass(epoch: 1, attempt: 3, complete: false)
        #expect(retryAfter == 3)
        let ticket = try #require(schedule.requestRetry(epoch: 1, attempt: 3) as Int?)
        let joined = schedule.joinChain(epoch: 1)
        #expect(joined)
        let due = schedule.retryIsDue(epoch: 1, ticket: ticket)
        let started = schedule.startPass(epoch: 1, attempt: 4)
        #expect(due && started)
        let next = schedule.endPass(epoch: 1, attempt: 4, complete: false)
        #expect(next == 4, "the count goes on")
    }

    /// The pass may have skipped the channel the failed work held: it ends as incomplete,
    /// its own progress deciding the count (the last allowed pass without progress gives
    /// up; one with progress starts over). Before, the joined work was a retry at 0.
    @Test(arguments: [(attempt: 8, counted: 8), (attempt: 8, counted: 0), (attempt: 2, counted: 2)])
    func failedWorkWhileAPassRunsMakesThePassIncomplete(attempt: Int, counted: Int) {
        var schedule = SyncPassSchedule()
        _ = schedule.startPass(epoch: 1, attempt: attempt)
        let joined = schedule.joinChain(epoch: 1)
        #expect(joined)
        let retryAfter = schedule.endPass(epoch: 1, attempt: counted, complete: true)
        #expect(retryAfter == counted)
        _ = schedule.startPass(epoch: 1, attempt: counted + 1)
        let afterNext = schedule.endPass(epoch: 1, attempt: counted + 1, complete: true)
        #expect(afterNext == nil, "the next pass is judged by itself")
    }

    @Test func aNewConnectionForgetsWorkJoinedInTheOld() {
        var schedule = SyncPassSchedule()
        _ = schedule.startPass(epoch: 1, attempt: 0)
        _ = schedule.joinChain(epoch: 1)
        _ = schedule.startPass(epoch: 2, attempt: 0)
        let retryAfter = schedule.endPass(epoch: 2, attempt: 0, complete: true)
        #expect(retryAfter == nil)
    }
}
