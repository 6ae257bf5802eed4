import ChatSyncTesting
import Clocks
import Testing

@testable import ChatSync

/// Channels stay busy while every request fails: alice comes back to views left at the
/// newest messages (loose) and views opened while away (fresh), in two channels, and
/// others keep posting (in those channels and a third) before each wait of the sync's
/// retries, on a clock the test moves. However many messages arrive, the chain of
/// retries ends after its eight retries (Guarantees: at most eight in a row without
/// progress), the engine then asks nothing more while nothing happens, and once the
/// link works the next message catches every view up.
///
/// Found: each message in a channel whose fresh views were not proven live started a
/// catch-up; failing, it asked for a retry at attempt 0, so on a busy channel the count
/// began again with each message and the retries never ended (one a second for as long
/// as messages came). The same was fixed for loose views with a focused test
/// (`SyncRetryTests.messagesArrivingWhileTheRetriesGoOnDoNotKeepThemGoing`); no
/// generator walked the fresh views' path.
@Suite("Busy channels while the sync's retries go on, generated", .capturingLogs)
struct BusyChannelRetryGeneratedTests {
    static let seeds = ScheduleSeeds.busyRetries
    static let channels = [Harness.channel, "random"]
    /// A channel no view shows: its messages must not matter.
    static let quiet = "quiet"

    @Test(arguments: 0..<2)
    func messagesNeverKeepAFailingChainOfRetriesGoing(batch: Int) async {
        await Self.seeds.run(batch: batch, of: 2) { seed in try await Self.schedule(seed) }
    }

    private struct Subject {
        let collection: MessageCollection
        let channelURL: String
        let kind: String
    }

    private static func schedule(_ seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let clock = TestClock()
        var clears = SeededGenerator(seed: seed &+ 1_000_000)
        let (harness, holder) = try await Harness.makeWrapped(
            history: 5, seed: seed, configure: { $0.clock = clock },
            wrapper: { CatchUpHolder(base: EveryOtherRequestLost(base: $0, losing: .proofs)) })
        let proofs = try #require(holder.base as? EveryOtherRequestLost)
        let (server, engine) = (harness.server, harness.manager.engine)
        for channelURL in Self.channels.dropFirst() + [Self.quiet] {
            try await server.createChannel(channelURL, members: ["alice", "bob", "carol"], name: channelURL)
            for index in 0..<3 { try await server.post(.text("h\(index)"), from: "bob", to: channelURL) }
        }
        await harness.online()
        var subjects: [Subject] = []
        var log: [String] = []
        for channelURL in Self.channels where Bool.random(using: &random) {
            let collection = try await harness.manager.messageCollection(channelURL: channelURL, limit: 20)
            _ = try await collection.fetchSucceededMessages(.previous)
            subjects.append(Subject(collection: collection, channelURL: channelURL, kind: "loose"))
            log.append("a view of \(channelURL) at its newest messages")
        }
        await harness.settle()
        await server.setOnline(false, for: "alice")
        await harness.settle()
        for channelURL in Self.channels + [Self.quiet] {
            for index in 0..<Int.random(in: 0...2, using: &random) {
                try await server.post(.text("away \(index)"), from: "carol", to: channelURL)
            }
        }
        // At least one fresh view: its channel's path is the one under test.
        let freshChannels = Self.channels.filter { _ in Bool.random(using: &random) }
        for channelURL in freshChannels.isEmpty ? [Self.channels.randomElement(using: &random)!] : freshChannels {
            let collection = try await harness.manager.messageCollection(channelURL: channelURL, limit: 20)
            subjects.append(Subject(collection: collection, channelURL: channelURL, kind: "fresh"))
            log.append("a fresh view of \(channelURL) opened while away")
        }
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await proofs.loseAll()  // for the clear below: the rest is answered while it is set up
        let passesBefore = harness.syncPassOverlaps.passes
        let chainsBefore = await engine.syncRetryChainsRunOut
        await server.setOnline(true, for: "alice")
        log.append("back, every request failing")
        #expect(await sleeperRegistered(on: clock), "the return's pass failed, and a retry waits: \(seeds.describe(seed))")

        // Each wait of the chain: others post, alice's engine handles it, then the wait ends.
        let bound = 3 * SyncEngine.syncRetryLimit
        var waits = 0
        var passesAtClear: Int?
        while waits < bound {
            guard await aRetryWaits(on: clock, engine) else { break }
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let channelURL = (Self.channels + [Self.quiet]).randomElement(using: &random)!
                try await server.post(.text("busy \(waits)"), from: "carol", to: channelURL)
                let delivered = await server.deliveredEventCount(for: "alice")
                #expect(await eventually { await engine.handledEventCount >= delivered }, "\(seeds.describe(seed))")
                log.append("post to \(channelURL) before wait \(waits + 1)")
            }
            // The catch-ups the messages started end (failing) before the wait does, so that
            // each joins the chain as it stands rather than the pass the wait leads to.
            #expect(await eventually { await engine.catchUpsRunning == 0 }, "\(seeds.describe(seed))")
            if passesAtClear == nil, Int.random(in: 0..<4, using: &clears) == 0,
                let fresh = subjects.first(where: { $0.kind == "fresh" })
            {
                passesAtClear = try await clearWhileAMessagesCatchUpIsOut(in: fresh.channelURL, harness, holder, log: &log)
            }
            await clock.advance(by: .seconds(30))
            waits += 1
        }
        let context = "\(seeds.describe(seed)): \(log)"
        // The return's pass and its eight retries (a wait of the clock may end several); the
        // clear earns a chain of its own: the pass that was waiting, then eight retries.
        let passes = harness.syncPassOverlaps.passes - passesBefore
        let beforeClear = (passesAtClear ?? harness.syncPassOverlaps.passes) - passesBefore
        #expect(beforeClear <= 1 + SyncEngine.syncRetryLimit, "the sync ran \(passes) passes over \(waits) waits: \(context)")
        if let passesAtClear {
            let afterClear = harness.syncPassOverlaps.passes - passesAtClear
            #expect(
                (SyncEngine.syncRetryLimit...(1 + SyncEngine.syncRetryLimit)).contains(afterClear),
                "the clear's chain ran \(afterClear) passes: \(context)")
        }
        #expect(await engine.syncRetriesRanOut, "the chain ran out: \(context)")
        #expect(await engine.syncRetryChainsRunOut == chainsBefore + 1, "one chain, run out once: \(context)")
        let requests = await server.requestCount
        await clock.advance(by: .seconds(600))
        #expect(await server.requestCount == requests, "nothing is asked while nothing happens: \(context)")

        // The link works again: the next message in each channel catches its views up.
        await server.setFaults(FaultPlan())
        await proofs.stopLosing()
        for channelURL in Set(subjects.map(\.channelURL)).sorted() {
            try await server.post(.text("after"), from: "carol", to: channelURL)
        }
        await harness.settle()
        for subject in subjects {
            let shown = await subject.collection.succeededMessages.last?.text
            #expect(shown == "after", "the \(subject.kind) view of \(subject.channelURL) shows \(shown ?? "nothing"): \(context)")
        }
        await harness.manager.close()
    }

    /// The app clears the cache while a catch-up a message started in `channelURL` is
    /// out, so that the clear's own catch-up of that channel is not started (one runs):
    /// answers the count of passes at the clear, or `nil` when no catch-up was held.
    /// While it is set up only requests that could prove a channel live go unanswered
    /// (so that the message's catch-up gets past the change logs to its page); from the
    /// clear on, none is answered, so that no pass gets further and starts the count over.
    private static func clearWhileAMessagesCatchUpIsOut(
        in channelURL: String, _ harness: Harness, _ holder: CatchUpHolder, log: inout [String]
    ) async throws -> Int? {
        let (server, engine) = (harness.server, harness.manager.engine)
        await server.setFaults(FaultPlan())
        await holder.holdNextCatchUp()
        try await server.post(.text("before the clear"), from: "carol", to: channelURL)
        let delivered = await server.deliveredEventCount(for: "alice")
        #expect(await eventually { await engine.handledEventCount >= delivered })
        let held = await eventually {
            if await holder.isHolding { return true }
            return await engine.catchUpsRunning == 0
        }
        guard held, await holder.isHolding else {
            await server.setFaults(FaultPlan(failRequestRate: 1))
            await holder.release()
            return nil
        }
        try await harness.manager.clearCache()
        await server.setFaults(FaultPlan(failRequestRate: 1))
        let passes = harness.syncPassOverlaps.passes
        await holder.release()
        #expect(await eventually { await engine.catchUpsRunning == 0 })
        log.append("alice clears the cache while a message's catch-up of \(channelURL) is out")
        return passes
    }
}
