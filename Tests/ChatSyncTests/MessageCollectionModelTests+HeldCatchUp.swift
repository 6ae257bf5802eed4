import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Alice is away while others post; when she comes back, the reconnect's catch-up of
    /// the channel stays in flight while the connection breaks and comes back again, and
    /// others post once more (``Harness/returnWithCatchUpHeld(_:turns:onEachChange:whileAwayAgain:)``).
    /// The views at the newest edge must still show everything posted while she was away,
    /// without a fetch (Guarantees: Live updates and reconnect, "work left from a lost
    /// connection never keeps the next connection's sync from running"): the step's check
    /// after settling is `RarePaths.check`.
    static func catchUpHeldAcrossAReconnect(
        _ harness: Harness, _ holder: CatchUpHolder, _ subjects: [ModelSubject], _ rare: inout RarePaths,
        random: inout SeededGenerator, log: inout [String]
    ) async throws {
        log.append("away, back with the catch-up held, away and back again")
        await rare.connectionBreaks(harness, subjects)
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        try await othersPost(harness.server, random: &random)
        let run = try await harness.returnWithCatchUpHeld(
            holder, turns: 200_000,
            onEachChange: { online in
                if online { await rare.connectionBack(harness.server) } else { await rare.connectionBreaks(harness, subjects) }
            },
            whileAwayAgain: { try await othersPost(harness.server, random: &random) })
        // A wait that gave up (a machine far too slow) only weakens the step, never fails
        // it: with the fix either order catches the views up. The log says so.
        if !run.held {
            log.append("  no catch-up to hold (no view at the newest edge), or it never came")
        } else if !run.complete {
            log.append("  a wait gave up: \(run)")
        }
    }

    /// Others post a few messages while alice is away.
    private static func othersPost(_ server: SimulatedChatServer, random: inout SeededGenerator) async throws {
        for index in 0..<Int.random(in: 1...4, using: &random) {
            let sender = Bool.random(using: &random) ? "bob" : "carol"
            try await server.post(.text("away \(index)"), from: sender, to: Harness.channel)
        }
    }
}
