import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Alice is away while others post; when she comes back, the reconnect's catch-up of
    /// the channel stays in flight (a request on the old socket that hangs) while the
    /// connection breaks and comes back again, and others post once more. Then it is
    /// answered. The views at the newest edge must still show everything posted while she
    /// was away, without a fetch (Guarantees: Live updates and reconnect, "work left from a
    /// lost connection never keeps the next connection's sync from running"): the step's
    /// check after settling is `RarePaths.check`.
    static func catchUpHeldAcrossAReconnect(
        _ harness: Harness, _ holder: CatchUpHolder, _ subjects: [ModelSubject], _ rare: inout RarePaths,
        random: inout SeededGenerator, log: inout [String]
    ) async throws {
        let server = harness.server
        let engine = harness.manager.engine
        log.append("away, back with the catch-up held, away and back again")
        try await breakTheConnection(harness, subjects, &rare, random: &random)
        await holder.holdNextCatchUp()
        await rare.connectionBack(server)
        await server.setOnline(true, for: "alice")
        let held = await eventually {
            if await holder.isHolding { return true }
            return await engine.isIdle(deliveredEvents: await server.deliveredEventCount(for: "alice"))
        }
        guard await holder.isHolding else {
            await holder.release()
            // Settled without one: no view at the newest edge, so nothing to catch up.
            log.append(held ? "  no catch-up to hold" : "  timed out waiting for the catch-up")
            return
        }
        do {
            let epoch = await engine.epoch
            try await breakTheConnection(harness, subjects, &rare, random: &random, settling: false)
            let broke = await eventually { await engine.epoch > epoch }
            await rare.connectionBack(server)
            await server.setOnline(true, for: "alice")
            // The second return's sync runs to its end before the old catch-up is answered
            // (only the held request's task still runs), so the old one cannot end first and
            // hide a sync the second return skipped. A wait that times out (a machine far
            // too slow) only weakens the step, never fails it: with the fix either order
            // catches the views up. The log says so.
            let back = await eventually { await engine.isOnline }
            let synced = await eventually { await engine.backgroundTaskCount == 1 }
            if !(broke && back && synced) { log.append("  timed out (break \(broke), back \(back), synced \(synced))") }
        } catch {
            await holder.release()
            throw error
        }
        await holder.release()
    }

    /// The connection breaks (handled before others post, unless `settling` is false),
    /// and others post a few messages while alice is away.
    private static func breakTheConnection(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, random: inout SeededGenerator,
        settling: Bool = true
    ) async throws {
        await rare.connectionBreaks(harness, subjects)
        await harness.server.setOnline(false, for: "alice")
        if settling { await harness.settle() }
        for index in 0..<Int.random(in: 1...4, using: &random) {
            let sender = Bool.random(using: &random) ? "bob" : "carol"
            try await harness.server.post(.text("away \(index)"), from: sender, to: Harness.channel)
        }
    }
}
