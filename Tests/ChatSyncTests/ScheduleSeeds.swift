import Foundation
import Testing

/// Which seeds a seeded generator runs, how they are split into batches, and how a
/// failing one names the command that replays it alone. Every generator of the suite
/// (soak, model tests, hostile answers, channel lists) goes through this one type, so
/// the environment variables behave the same everywhere: `<NAME>_SEED=N` replays one
/// seed, `<NAME>_SEEDS=N` runs seeds 0..<N, and the regressions beyond the range always run.
struct ScheduleSeeds: Sendable {
    /// The environment variables' prefix, such as `SOAK`.
    let name: String
    /// What to pass to `swift test --filter` to run only this generator.
    let filter: String
    let defaultCount: Int
    /// Seeds beyond the default range that once found a bug, kept so CI keeps checking the fix.
    let regressions: [UInt64]

    /// The soak (SoakTests): 2416 (a lost change-log request after reconnecting was never
    /// retried), 4019 and 1322084 (a resend answered with a message deleted since waited
    /// for its echo for good).
    static let soak = ScheduleSeeds(name: "SOAK", filter: "Soak", defaultCount: 1_000, regressions: [2416, 4019, 1322084])
    /// The two model-based tests: 1452, 1610 (a stale stray row), 1495 (a stray row past the
    /// live edge), 362 (an old subscription's event applied after resume; needs load to show), 233
    /// (a filtered view opened offline on an empty cache showed nothing once online), 499 (a
    /// refused change-log token dropped the history twice, for two requests that carried it), 236
    /// (a fill and the cache's trim took the same range back and forth for ever, the test hung).
    static let model = ScheduleSeeds(
        name: "MODEL", filter: "model", defaultCount: 200, regressions: [233, 236, 362, 499, 1452, 1495, 1610])
    /// The model tests run their schedules in this many parallel batches, each one seed
    /// after another, so that a batch can tell whether its crossed-answers steps crossed
    /// anything at all (``runCountingCrossings(batch:of:_:)``).
    static let modelBatchCount = 4
    /// Hostile answers: 2155 (an empty page claiming older messages became a range at the
    /// end of time; a catch-up then asked without end).
    static let hostile = ScheduleSeeds(name: "HOSTILE", filter: "Hostile", defaultCount: 400, regressions: [2155])
    /// Fresh views completing their newest page over a flaky connection
    /// (FreshViewNewestPageGeneratedTests).
    static let freshViews = ScheduleSeeds(name: "FRESH_VIEWS", filter: "FreshViewNewestPageGenerated", defaultCount: 150, regressions: [])
    /// Sparse filters scrolled to both ends of a channel under forced trims
    /// (SparseFilterScrollGeneratedTests).
    static let sparseScroll = ScheduleSeeds(
        name: "SPARSE_SCROLL", filter: "SparseFilterScrollGenerated", defaultCount: 120, regressions: [])
    /// Managers closed at any request, in memory and on a file (CloseMidWorkGeneratedTests).
    static let closeMidWork = ScheduleSeeds(
        name: "CLOSE_MID_WORK", filter: "CloseMidWorkGenerated", defaultCount: 150, regressions: [])
    /// Busy channels while every request fails and the sync's retries go on, on a test
    /// clock (BusyChannelRetryGeneratedTests).
    static let busyRetries = ScheduleSeeds(
        name: "BUSY_RETRIES", filter: "BusyChannelRetryGenerated", defaultCount: 60, regressions: [])
    /// The chain of sync retries driven as the engine drives it, with catch-ups failing at
    /// any point (SyncPassScheduleGeneratedTests): no database, so many seeds are cheap.
    static let passSchedule = ScheduleSeeds(
        name: "PASS_SCHEDULE", filter: "SyncPassScheduleGenerated", defaultCount: 2_000, regressions: [])
    /// One of alice's channels deleted or left in any connection state, the app running or
    /// not (ChannelGoneGeneratedTests).
    static let channelGone = ScheduleSeeds(name: "CHANNEL_GONE", filter: "ChannelGoneGenerated", defaultCount: 200, regressions: [])
    /// Views opened inside ranges just synced, after others changed them
    /// (CacheReadsAfterWritesGeneratedTests).
    static let cacheReads = ScheduleSeeds(
        name: "CACHE_READS", filter: "CacheReadsAfterWritesGenerated", defaultCount: 150, regressions: [])
    /// Others' messages and this user's own told apart by their ids' bytes
    /// (SenderIdentityGeneratedTests).
    static let senderIdentity = ScheduleSeeds(
        name: "SENDER_IDENTITY", filter: "SenderIdentityGenerated", defaultCount: 100, regressions: [])
    /// One message resent by its timers and by the app under the automatic policy, on a
    /// test clock (AutomaticResendTimersGeneratedTests). Each of its half-second ticks
    /// gives woken timers turns to run, which costs the whole suite's CPU when every
    /// suite runs at once (100 seeds took 4 minutes of a CI run): 40 find the timer bug
    /// in about 26 seeds, and more run alone in seconds.
    static let automaticResends = ScheduleSeeds(
        name: "AUTOMATIC_RESENDS", filter: "AutomaticResendTimersGenerated", defaultCount: 40, regressions: [])
    /// The channel list's replay generator.
    static let channelList = ScheduleSeeds(name: "CHANNEL_LIST", filter: "ChannelCollection", defaultCount: 120, regressions: [231])

    var all: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["\(name)_SEED"].flatMap(UInt64.init) { return [one] }
        let count = UInt64(environment["\(name)_SEEDS"].flatMap(Int.init) ?? defaultCount)
        return Array(0..<count) + regressions.filter { $0 >= count }
    }

    /// The seeds of batch `batch` of `count`: a test case per seed would start all of them
    /// at once, each with its database files open, and thousands of seeds would run the
    /// process out of file descriptors; batches run their seeds one after another.
    func batch(_ batch: Int, of count: Int) -> [UInt64] {
        all.filter { $0 % UInt64(count) == UInt64(batch) }
    }

    /// "seed N (replay: NAME_SEED=N swift test --filter F)", for failure messages.
    func describe(_ seed: UInt64) -> String {
        "seed \(seed) (replay: \(name)_SEED=\(seed) swift test --filter \(filter))"
    }

    /// Runs `schedule` for each seed of a batch; a seed that throws is recorded as an
    /// issue naming its replay, and the others still run.
    func run(batch index: Int, of count: Int, _ schedule: (UInt64) async throws -> Void) async {
        for seed in batch(index, of: count) {
            do {
                try await schedule(seed)
            } catch {
                Issue.record("\(describe(seed)) threw \(error)")
            }
        }
    }
}
