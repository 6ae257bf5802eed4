import ChatSyncTesting
import Clocks
import GRDB
import Testing

@testable import ChatSync

/// A view of "general" (at most `limit` messages) holding the 5 messages of its history,
/// online, in a harness made with `configure`.
private func followingView(
    limit: Int = 10, configure: (inout SyncManagerOptions) -> Void = { _ in }
) async throws -> (Harness, MessageCollection, EventRecorder) {
    let harness = try await Harness.make(history: 5, configure: configure)
    let (collection, recorder) = try await followingView(in: harness, limit: limit)
    return (harness, collection, recorder)
}

/// A view of "general" (at most `limit` messages) in `harness`, whose channel holds a
/// history of 5 messages, fetched with the manager online.
private func followingView(in harness: Harness, limit: Int) async throws -> (MessageCollection, EventRecorder) {
    let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: limit)
    let recorder = EventRecorder()
    await collection.setHandler(recorder)
    await harness.online()
    _ = try await collection.fetchSucceededMessages(.previous)
    await harness.settle()
    #expect(await collection.succeededMessages.count == 5)
    return (collection, recorder)
}

/// A sync after reconnecting that the service does not answer is tried again with
/// backoff (found by the simulation soak, seed 2416: a deletion made while offline
/// stayed in the view because the change-log request after reconnecting was lost).
@Suite("Sync retries", .capturingLogs)
struct SyncRetryTests {
    @Test func aLostReconnectSyncIsRetriedAfterABackoff() async throws {
        let clock = TestClock()
        let (harness, collection, recorder) = try await followingView { $0.clock = clock }
        let server = harness.server
        await server.setOnline(false, for: "alice")
        await harness.settle()
        let victim = await server.messages(in: Harness.channel)[2]
        try await server.delete(messageId: victim.messageId, channelURL: Harness.channel)
        try await server.post(.text("while away"), from: "bob", to: Harness.channel)
        await server.setFaults(FaultPlan(loseResponseRate: 1))
        await server.setOnline(true, for: "alice")

        #expect(await sleeperRegistered(on: clock), "a retry is scheduled")
        #expect(await collection.succeededMessages.contains { $0.messageId == victim.messageId }, "the deletion is not known yet")
        await server.setFaults(FaultPlan())
        await clock.advance(by: .milliseconds(999))
        #expect(await collection.succeededMessages.contains { $0.messageId == victim.messageId }, "not before 1 s")
        await clock.advance(by: .milliseconds(1))
        await harness.settle()
        let succeeded = await checkInvariants(collection, recorder)
        #expect(succeeded.map(\.messageId) == (await server.messages(in: Harness.channel)).map(\.messageId))
        #expect(succeeded.last?.text == "while away", "the view caught up and follows the live edge again")
    }

    @Test func retriesAreBoundedAndAFetchStartsOver() async throws {
        let clock = TestClock()
        let (harness, collection, _) = try await followingView { $0.clock = clock }
        let server = harness.server
        await server.setOnline(false, for: "alice")
        await harness.settle()
        try await server.post(.text("while away"), from: "bob", to: Harness.channel)
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await server.setOnline(true, for: "alice")
        let delays = [1, 2, 4, 8, 16, 30, 30, 30]
        #expect(delays.count == SyncEngine.syncRetryLimit)
        for (attempt, delay) in delays.enumerated() {
            #expect(await sleeperRegistered(on: clock), "retry \(attempt + 1) is scheduled")
            let before = await server.requestCount
            await clock.advance(by: .seconds(delay) - .milliseconds(1))
            #expect(await server.requestCount == before, "retry \(attempt + 1) waits \(delay) s")
            await clock.advance(by: .milliseconds(1))
            #expect(await eventually { await server.requestCount > before })
        }
        #expect(await eventually { await harness.manager.engine.backgroundTaskCount == 0 }, "then it waits for the app or the network")
        let requests = await server.requestCount
        await clock.advance(by: .seconds(600))
        #expect(await server.requestCount == requests)

        await server.setFaults(FaultPlan())
        _ = try await collection.fetchSucceededMessages(.next)
        await harness.settle()
        #expect(await collection.succeededMessages.last?.text == "while away")
    }
}

extension SyncRetryTests {
    /// A view left behind while every request fails, and others keep posting: a message
    /// arriving while the retries go on leaves their count alone, so the chain still ends
    /// after its eight retries (a reviewer found that a catch-up started per message began
    /// the count again each time, so on a busy channel the chain never ended). Once it has
    /// ended, the next message starts the view's catch-up again: real time shows the link works.
    @Test func messagesArrivingWhileTheRetriesGoOnDoNotKeepThemGoing() async throws {
        let clock = TestClock()
        let (harness, collection, _) = try await followingView { $0.clock = clock }
        let server = harness.server
        let engine = harness.manager.engine
        await server.setOnline(false, for: "alice")
        await harness.settle()
        try await server.post(.text("while away"), from: "bob", to: Harness.channel)
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await server.setOnline(true, for: "alice")
        for (attempt, delay) in [1, 2, 4, 8, 16, 30, 30, 30].enumerated() {
            #expect(await sleeperRegistered(on: clock), "retry \(attempt + 1) is scheduled")
            try await server.post(.text("busy \(attempt)"), from: "carol", to: Harness.channel)
            let delivered = await server.deliveredEventCount(for: "alice")
            #expect(await eventually { await engine.handledEventCount >= delivered }, "the message was handled")
            await clock.advance(by: .seconds(delay))
        }
        #expect(await eventually { await engine.backgroundTaskCount == 0 }, "the chain ran out after its eight retries")
        #expect(await engine.syncRetriesRanOut)
        let requests = await server.requestCount
        await clock.advance(by: .seconds(600))
        #expect(await server.requestCount == requests)

        await server.setFaults(FaultPlan())
        try await server.post(.text("after"), from: "carol", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages.last?.text == "after", "the next message started the catch-up again")
    }
}

extension SyncRetryTests {
    /// The app clears the cache while a catch-up a message started is out: the clear's own
    /// catch-up is not started (one runs), and the running one stands in for it. When that
    /// fails, the clear still earns a chain of retries of its own, as before messages'
    /// catch-ups joined the chain: without it, the chain ended at its eighth retry and the
    /// emptied screen waited for the next message or reconnect (a reviewer's find).
    @Test func aClearWhileAMessagesCatchUpIsOutStillEarnsItsRetries() async throws {
        let clock = TestClock()
        let (harness, holder) = try await Harness.makeWrapped(
            history: 5, configure: { $0.clock = clock },
            wrapper: { CatchUpHolder(base: EveryOtherRequestLost(base: $0, losing: .proofs)) })
        let proofs = try #require(holder.base as? EveryOtherRequestLost)
        let (server, engine) = (harness.server, harness.manager.engine)
        await harness.online()
        await server.setOnline(false, for: "alice")
        await harness.settle()
        let fresh = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        // Every request that could prove the channel live is lost; the rest is answered.
        await proofs.loseAll()
        await server.setOnline(true, for: "alice")
        for delay in [1, 2, 4, 8, 16, 30, 30] {
            #expect(await sleeperRegistered(on: clock))
            await clock.advance(by: .seconds(delay))
        }
        #expect(await sleeperRegistered(on: clock), "the eighth and last retry waits")
        await holder.holdNextCatchUp()
        try await server.post(.text("busy"), from: "carol", to: Harness.channel)
        try #require(await eventually { await holder.isHolding }, "the message's catch-up is out")
        try await harness.manager.clearCache()
        // Nothing answered from now on, so that no pass gets further (the clear made change
        // logs due again, and applying them would be progress that starts the count over).
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await holder.release()
        #expect(await eventually { await engine.catchUpsRunning == 0 })
        await clock.advance(by: .seconds(30))
        #expect(await sleeperRegistered(on: clock), "the clear's chain goes on past the eighth retry")
        #expect(await !engine.syncRetriesRanOut)

        await proofs.stopLosing()
        await server.setFaults(FaultPlan())
        await clock.advance(by: .seconds(30))
        await harness.settle()
        #expect(await fresh.succeededMessages.last?.text == "busy", "the emptied screen shows the newest message")
    }
}

/// Every request for a retry of one connection's reconnect sync (its return, fetches
/// whose change logs went unanswered) joins one chain of retries, and its passes never
/// overlap. Before, each request started a chain of its own: a return and three fetches
/// against a service that answered nothing made 1 + 4 × 8 passes, now 2 + 8 (the soak saw passes of
/// one connection overlap in 60 of 100 schedules).
@Suite("Sync retries of one connection", .capturingLogs)
struct OneRetryChainTests {
    @Test func aReturnAndThreeUnansweredFetchesMakeOneChainOfRetries() async throws {
        let clock = TestClock()
        let (harness, collection, _) = try await followingView { $0.clock = clock }
        let server = harness.server
        let before = harness.syncPassOverlaps.passes  // the first connection's
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await server.setOnline(true, for: "alice")
        #expect(await sleeperRegistered(on: clock), "the return's pass failed; a retry waits")
        #expect(harness.syncPassOverlaps.passes - before == 1)
        for _ in 0..<3 { _ = try await collection.fetchSucceededMessages(.next) }
        // Each wait ends within 30 s; each pass that fails asks for the next, until none waits.
        let engine = harness.manager.engine
        for _ in 0..<(4 * SyncEngine.syncRetryLimit) {
            guard await aRetryWaits(on: clock, engine) else { break }
            await clock.advance(by: .seconds(30))
        }
        #expect(await engine.backgroundTaskCount == 0, "then it waits for the app or the network")
        await clock.advance(by: .seconds(600))
        // One chain: the return's pass, the retry that was waiting when the fetches failed
        // (they leave it due when it was), then the whole series again, counted from them.
        #expect(harness.syncPassOverlaps.passes - before == 2 + SyncEngine.syncRetryLimit, "one chain of retries")
        #expect(harness.syncPassOverlaps.count == 0)
    }
}

extension OneRetryChainTests {
    /// A fetch that fails while a retry waits leaves the retry due when it was: a stream
    /// of failing fetches once postponed the pass (and the catch-ups and channel change
    /// logs it carries) for as long as it lasted. A second reader found it.
    @Test func aFailingFetchDoesNotPostponeARetryThatIsDue() async throws {
        let clock = TestClock()
        let (harness, collection, _) = try await followingView { $0.clock = clock }
        let server = harness.server
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await server.setOnline(true, for: "alice")
        #expect(await sleeperRegistered(on: clock), "the return's pass failed; its retry is due in 1 s")
        let before = harness.syncPassOverlaps.passes
        await clock.advance(by: .milliseconds(600))
        _ = try await collection.fetchSucceededMessages(.next)
        await clock.advance(by: .milliseconds(400))
        #expect(await eventually { harness.syncPassOverlaps.passes == before + 1 }, "the retry ran at 1 s")
    }
}

/// A connection that breaks and comes back twice while the engine is busy (its events
/// handled in one batch) is synced once, with one chain of retries. Before, each return
/// started a reconnect that read the connection's epoch only when its task ran, so both
/// found the same, current epoch: one connection ran two reconnect syncs, each with its
/// own 1 + 8 tries against a service that answered none, and resumed owed newest pages twice.
@Suite("Sync retries when the connection flaps", .capturingLogs)
struct FlappingReconnectTests {
    @Test func aConnectionThatFlapsWhileEventsWaitIsSyncedOnce() async throws {
        let harness = try await Harness.make(history: 5)
        let server = harness.server
        let engine = harness.manager.engine
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        await harness.online()
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()

        // One break and return, every request refused: what one connection's sync asks.
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await server.setFaults(FaultPlan(failRequestRate: 1))
        var before = await server.requestCount
        await server.setOnline(true, for: "alice")
        await harness.settle()
        let oneReturn = await server.requestCount - before
        #expect(oneReturn >= 1 + SyncEngine.syncRetryLimit, "the sync and its retries were refused")

        // Two breaks and returns, handled in one batch: the same, for the one connection left.
        await engine.holdEventDrain()
        let queued = await engine.handledOrQueuedEventCount
        for online in [false, true, false, true] { await server.setOnline(online, for: "alice") }
        #expect(await eventually { await engine.handledOrQueuedEventCount == queued + 4 }, "the four changes wait")
        before = await server.requestCount
        await engine.releaseEventDrain()
        await harness.settle()
        let flapped = await server.requestCount - before
        #expect(flapped == oneReturn, "one sync and one chain of retries: \(flapped) requests, one return made \(oneReturn)")
        await harness.manager.close()
    }

    /// The same for a relaunch's look-ups of the messages in flight: a start whose
    /// connection breaks and comes back before the engine handles it looks each batch up
    /// as often as a plain start does, not once per return.
    @Test func aRelaunchWhoseConnectionFlapsLooksUpOnce() async throws {
        let plain = try await lookUpsAfterARelaunch(flapping: false)
        let flapping = try await lookUpsAfterARelaunch(flapping: true)
        #expect(plain == SyncEngine.syncRetryLimit, "the first batch of a hundred, tried 8 times (a try stops at its first refusal)")
        #expect(flapping == plain)
    }

    /// Relaunches on 250 messages in flight, with every request refused, and counts the look-ups.
    private func lookUpsAfterARelaunch(flapping: Bool) async throws -> Int {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.maxFailedMessageCountPerChannel = 1000 }
        for index in 0..<250 { _ = try await harness.manager.sendMessage(.text("m\(index)"), channelURL: Harness.channel) }
        await harness.manager.close()
        let queue = try DatabaseQueue(path: harness.path!)
        try await queue.write { try $0.execute(sql: "UPDATE outbox SET state = ?", arguments: [SyncState.syncing.rawValue]) }
        try queue.close()
        try await harness.reopen()
        let (server, engine) = (harness.server, harness.manager.engine)
        await server.setFaults(FaultPlan(failRequestRate: 1))
        // The manager starts offline; the returns wait in the inbox and are handled in one go.
        await server.setOnline(false, for: "alice")
        await harness.manager.resumeSync()
        await engine.holdEventDrain()
        let changes = flapping ? [true, false, true] : [true]
        let queued = await engine.handledOrQueuedEventCount
        for online in changes { await server.setOnline(online, for: "alice") }
        #expect(await eventually { await engine.handledOrQueuedEventCount == queued + changes.count }, "the changes wait")
        await engine.releaseEventDrain()
        await harness.settle()
        #expect(try harness.outbox().allSatisfy { $0.message.syncState == .failed }, "unknown after 8 tries: failed, resendable")
        let lookUps = await server.lookUpCount
        await harness.manager.close()
        return lookUps
    }
}

/// A catch-up of a connection that was lost while its request was in flight does not
/// keep the next connection from catching the channel up. Before, the next reconnect
/// skipped a channel whose catch-up still ran; the old one then stopped on its lost
/// epoch, and its retry, asked for under that epoch, was dropped: the views missed what
/// was posted while away until the app fetched.
@Suite("A catch-up across reconnects", .capturingLogs)
struct CatchUpAcrossReconnectsTests {
    @Test func aCatchUpLeftFromTheLastConnectionDoesNotBlockTheNext() async throws {
        let (harness, holder) = try await Harness.makeWrapped(history: 5, wrapper: CatchUpHolder.init(base:))
        let (collection, recorder) = try await followingView(in: harness, limit: 30)
        let server = harness.server

        // Away; back, with the catch-up's request held in flight; away and back again.
        await server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<3 { try await server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
        let run = try await harness.returnWithCatchUpHeld(holder) {
            for index in 3..<5 { try await server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
        }
        #expect(run.complete, "the catch-up was held across the second break and return: \(run)")
        await harness.settle()

        let truth = await server.messages(in: Harness.channel)
        let shown = await checkInvariants(collection, recorder)
        #expect(shown.map(\.messageId) == truth.map(\.messageId), "caught up without a fetch: \(shown.count) of \(truth.count)")
        await harness.manager.close()
    }
}
