import ChatSyncTesting
import Testing

@testable import ChatSync

/// Drives ``SyncPassSchedule`` as the engine does (a pass runs, ends counted by its
/// progress, asks for its retry, gives up at ``SyncEngine/syncRetryLimit``), while
/// real-time messages' catch-ups fail at any point of a pass or of a wait and the app now
/// and then asks for a sync of its own. The chain's promises (Guarantees: at most eight
/// retries in a row without progress):
///
/// - a failed catch-up never starts the count over, so a busy channel cannot keep a
///   failing chain going (at most 1 + 8 passes in a row without progress);
/// - it never ends a chain early either: the chain gives up only after eight retries in
///   a row without progress, never at a pass that got further;
/// - nothing that failed is dropped: after a pass that was incomplete, or during which a
///   catch-up failed, a retry waits, unless the chain gave up.
///
/// Found (with the engine's first fix reverted): a catch-up that failed while a pass ran
/// asked for a retry at the pass's raw attempt, ignoring the pass's progress, and ended
/// the chain at a pass that had got further (only the focused
/// `SyncPassScheduleTests.failedWorkWhileAPassRunsMakesThePassIncomplete` walked it).
@Suite("Sync pass schedule, generated")
struct SyncPassScheduleGeneratedTests {
    static let seeds = ScheduleSeeds.passSchedule

    @Test func failedCatchUpsNeitherKeepAChainGoingNorEndItEarly() {
        for seed in Self.seeds.all { Self.schedule(seed) }
    }

    /// The engine's side: the retries it asked for and the passes it ran, as
    /// `SyncEngine+Reconnect.swift` and `runCatchUp` use the schedule.
    private struct Driver {
        static let epoch = 1
        var schedule = SyncPassSchedule()
        /// The retry that waits: its ticket and the attempt its pass runs with.
        var waiting: (ticket: Int, attempt: Int)?
        /// Passes without progress since the chain began or last got further.
        var passesWithoutProgress = 0
        var log: [String] = []

        /// `scheduleSyncRetry(attempt:epoch:)`.
        mutating func scheduleRetry(after attempt: Int) {
            if attempt >= SyncEngine.syncRetryLimit {
                schedule.noteGaveUp(epoch: Self.epoch, leftUnproven: [])
                return
            }
            if let ticket = schedule.requestRetry(epoch: Self.epoch, attempt: attempt) {
                waiting = (ticket, attempt + 1)
            }
        }

        /// Whether a pass runs.
        var running = false

        /// `runCatchUp`'s end after a failure asked for by a message only. Whether a chain
        /// goes on is the driver's own knowledge, not the schedule's answer, so that a
        /// schedule that started a chain for every failure is caught.
        mutating func catchUpFailed(seed: String) {
            log.append("a message's catch-up fails")
            let chainGoesOn = running || waiting != nil
            let joined = schedule.joinChain(epoch: Self.epoch)
            #expect(
                joined == chainGoesOn, "a failed catch-up joined: \(joined), a chain goes on: \(chainGoesOn): \(seed): \(log.suffix(24))")
            if !chainGoesOn { passesWithoutProgress = 0 }  // no chain went on: it starts one
            if !joined { scheduleRetry(after: 0) }
        }

        /// A fetch (or a resume) whose change logs were not answered asks at attempt 0.
        mutating func appAsks() {
            log.append("the app asks")
            passesWithoutProgress = 0
            scheduleRetry(after: 0)
        }
    }

    private static func schedule(_ seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var driver = Driver()
        func context() -> String { "\(seeds.describe(seed)): \(driver.log.suffix(24))" }
        /// Work that fails between two steps of the engine: messages' catch-ups, and rarely the app.
        func interleave() {
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                if Int.random(in: 0..<10, using: &random) == 0 {
                    driver.appAsks()
                } else {
                    driver.catchUpFailed(seed: seeds.describe(seed))
                }
            }
        }

        var nextAttempt: Int? = 0  // the connection's return runs the first pass
        for _ in 0..<60 {
            if nextAttempt == nil {
                guard let waiting = driver.waiting else {
                    // No chain goes on (it completed or gave up): a message's catch-up may start one.
                    guard Bool.random(using: &random) else { return }
                    driver.catchUpFailed(seed: seeds.describe(seed))
                    continue
                }
                interleave()
                guard driver.schedule.retryIsDue(epoch: Driver.epoch, ticket: waiting.ticket) else {
                    Issue.record("the waiting retry is not due when its wait ends: \(context())")
                    return
                }
                driver.waiting = nil
                nextAttempt = waiting.attempt
            }
            let attempt = nextAttempt!
            nextAttempt = nil
            let started = driver.schedule.startPass(epoch: Driver.epoch, attempt: attempt)
            #expect(started, "no pass runs when a retry's wait ends: \(context())")
            driver.running = true
            let joinsBefore = driver.log.count { $0.hasPrefix("a message") }
            interleave()
            let joined = driver.log.count { $0.hasPrefix("a message") } > joinsBefore
            let progress = Int.random(in: 0..<5, using: &random) == 0
            let complete = Int.random(in: 0..<6, using: &random) == 0
            driver.log.append("pass at attempt \(attempt)\(progress ? ", got further" : "")\(complete ? ", complete" : "")")
            driver.passesWithoutProgress = progress ? 0 : driver.passesWithoutProgress + 1
            #expect(
                driver.passesWithoutProgress <= 1 + SyncEngine.syncRetryLimit,
                "\(driver.passesWithoutProgress) passes in a row without progress: \(context())")
            let gaveUpBefore = driver.schedule.gaveUpCount
            driver.running = false
            if let next = driver.schedule.endPass(epoch: Driver.epoch, attempt: progress ? 0 : attempt, complete: complete) {
                driver.scheduleRetry(after: next)
            }
            if driver.schedule.gaveUpCount > gaveUpBefore {
                #expect(
                    driver.passesWithoutProgress >= SyncEngine.syncRetryLimit,
                    "the chain gave up after \(driver.passesWithoutProgress) passes without progress: \(context())")
            } else if !complete || joined {
                #expect(driver.waiting != nil, "what failed was dropped: no retry waits: \(context())")
            }
        }
    }
}
