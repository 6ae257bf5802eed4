import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Others' burst queued behind a busy engine (issue 17's runs), as the soak makes
    /// them (`SoakTests.queuedBurst`). In a third of those made online and running, the
    /// connection also breaks and comes back once or twice among the queued posts, so the
    /// engine handles the break, the return and the messages around them in one batch.
    ///
    /// The model's watermarks (``RarePaths/connectionBreaks(_:_:)``) are taken when the
    /// test flips the connection, before the engine handles the flip. That order is safe
    /// for the check: a view fresh at the flip can only stop being fresh before the engine
    /// sees the break (its watermark then moves later than need be, which checks less); a
    /// view not fresh at the flip cannot become fresh again without a reset.
    ///
    /// Without a flap the burst draws from `random` exactly what it drew before this
    /// step existed, so each seed's other streams stay as they were.
    static func queuedBurst(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, flapping: Bool,
        random: inout SeededGenerator, flaps: inout SeededGenerator, log: inout [String]
    ) async throws {
        var parts = 1
        var flapsBefore: Set<Int> = []  // the parts a break and return come before (`parts`: after the last)
        if flapping, Int.random(in: 0..<3, using: &flaps) == 0 {
            parts = Int.random(in: 1...2, using: &flaps)
            for _ in 0..<Int.random(in: 1...2, using: &flaps) { flapsBefore.insert(Int.random(in: 0...parts, using: &flaps)) }
        }
        try await harness.withEventsQueued {
            for part in 0...parts {
                if flapsBefore.contains(part) {
                    log.append("[flap in the burst]")
                    await rare.connectionBreaks(harness, subjects)
                    await harness.server.setOnline(false, for: "alice")
                    await harness.server.setOnline(true, for: "alice")
                    await rare.connectionBack(harness.server)
                }
                guard part < parts else { break }
                log.append(
                    try await LiveBurst.others(harness.server, channels: [Harness.channel], senders: senders, random: &random))
            }
        }
    }
}
