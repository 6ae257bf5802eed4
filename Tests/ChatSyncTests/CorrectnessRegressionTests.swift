import ChatSyncTesting
import Clocks
import Foundation
import Testing

@testable import ChatSync

/// One focused test per defect of issue 12, each a path a new user walked; the seeded
/// generators (the soak, the model tests) walk them too.
@Suite("Correctness regressions", .capturingLogs)
struct CorrectnessRegressionTests {
    private func open(_ harness: Harness, viewpoint: Int64 = .max, limit: Int = 50) async throws -> (MessageCollection, EventRecorder) {
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, viewpoint: viewpoint, limit: limit)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        return (collection, recorder)
    }

    /// Closes alice's app while T1 is in flight and T2 waits behind it; T1's request reaches
    /// the server. Answers the harness, not yet reopened, and the two request ids.
    private func killWithT1InFlight(_ harness: Harness) async throws -> (String, String) {
        await harness.online()
        await harness.server.holdRequests()
        let t1 = try await harness.manager.sendMessage(.text("T1"), channelURL: Harness.channel).reqId
        let t2 = try await harness.manager.sendMessage(.text("T2"), channelURL: Harness.channel).reqId
        let manager = harness.manager
        #expect(await eventually { (try? manager.engine.store.outboxEntry(reqId: t1))??.message.syncState == .syncing })
        await manager.close()
        await harness.server.releaseRequests()
        #expect(await eventually { await harness.server.sendLog.contains { $0.reqId == t1 } })
        return (t1, t2)
    }

    // 1. A relaunch whose look-up answer is lost wedged the lane.
    @Test func aLostLookUpAfterARelaunchIsAskedAgainAndTheLaneGoesOn() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let clock = TestClock()
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.clock = clock }
        let (t1, t2) = try await killWithT1InFlight(harness)
        await harness.server.setFaults(FaultPlan(loseResponseRate: 1))
        try await harness.reopen()
        let lookUps = await harness.server.requestCount
        await harness.manager.resumeSync()
        #expect(await eventually { await harness.server.requestCount > lookUps })  // the look-up, answer lost
        #expect(await sleeperRegistered(on: clock))
        await harness.server.setFaults(FaultPlan())
        await clock.advance(by: .seconds(1))
        let manager = harness.manager
        #expect(await eventually { (try? manager.engine.store.outboxEntries().isEmpty) == true })
        let sent = await harness.server.messages(in: Harness.channel).map(\.reqId)
        #expect(sent == [t1, t2], "each once, in lane order")
        await harness.manager.close()
    }

    @Test func lookUpsThatNeverAnswerFailTheMessageAsUnconfirmedAndFreeTheLane() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.messageResendPolicy = .manual }
        let (t1, t2) = try await killWithT1InFlight(harness)
        await harness.server.setFaults(FaultPlan(loseResponseRate: 1))
        try await harness.reopen()
        await harness.online()
        let entries = try harness.outbox()
        let first = entries.first { $0.reqId == t1 }
        #expect(first?.message.syncState == .failed)
        #expect(first?.message.failure?.code == ChatServiceError.Code.unconfirmed.rawValue)
        #expect(first?.message.failure?.isRetryable == true)
        #expect(entries.allSatisfy { !$0.message.syncState.isPending }, "no lane waits behind an unknown head")
        // Healthy again, resending is safe: the service answers T1's reqId with what it stored.
        await harness.server.setFaults(FaultPlan())
        try await harness.resendFailedAndSettle(retryableOnly: true)
        let sent = await harness.server.messages(in: Harness.channel).map(\.reqId)
        #expect(sent.filter { $0 == t1 }.count == 1 && sent.filter { $0 == t2 }.count == 1)
        #expect(try harness.outbox().isEmpty)
        await harness.manager.close()
    }

    // 2. The channel list lost a channel that moved across the cursor while paging.
    @Test func aChannelThatMovesAcrossTheCursorWhilePagingIsNotLost() async throws {
        let harness = try await Harness.make()
        for index in 0..<5 {
            try await harness.server.createChannel("c\(index)", members: ["alice", "bob"], name: "c\(index)")
            try await harness.server.post(.text("hi"), from: "bob", to: "c\(index)")
        }
        await harness.online()
        let list = try await harness.manager.channelCollection(query: ChannelListQuery(order: .latestLastMessage, limit: 2))
        _ = try await list.fetch()
        // The oldest channel, not loaded yet, moves to the top.
        try await harness.server.post(.text("news"), from: "bob", to: "c0")
        await harness.settle()
        while try await list.fetch() {}
        await harness.settle()
        let shown = await list.channels.map(\.channelURL)
        #expect(shown == ["c0", "c4", "c3", "c2", "c1", Harness.channel])
        await harness.manager.close()
    }

    // 3. Deleted and edited messages came back from the cache of a channel without a view.
    @Test func changeLogsReachACachedChannelThatHadNoViewAtTheReconnect() async throws {
        let harness = try await Harness.make(history: 200)
        await harness.online()
        let (first, _) = try await open(harness)
        while try await first.fetchSucceededMessages(.previous) {}
        await first.remove()
        await harness.server.setOnline(false, for: "alice")
        let all = await harness.serverMessages()
        let (deleted, edited) = (all[190], all[185])
        try await harness.server.delete(messageId: deleted.messageId, channelURL: Harness.channel)
        try await harness.server.update(messageId: edited.messageId, channelURL: Harness.channel, text: "edited away")
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        // A viewpoint inside the cached range: the page is served from the cache.
        let viewpoint = all[195].createdAt
        let (collection, recorder) = try await open(harness, viewpoint: viewpoint)
        _ = try await collection.fetchSucceededMessages(.previous)
        let shown = await collection.succeededMessages
        #expect(!shown.contains { $0.messageId == deleted.messageId })
        #expect(shown.first { $0.messageId == edited.messageId }?.text == "edited away")
        #expect(shown == Array(await harness.serverMessages().filter { $0.createdAt <= viewpoint }.suffix(50)))
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    // 4. A gap of exactly threshold + 1 went unreported.
    @Test(arguments: [(49, false), (50, false), (51, true), (52, true)])
    func aGapIsReportedExactlyWhenMoreThanTheThresholdAreMissing(missing: Int, reported: Bool) async throws {
        let harness = try await Harness.make(history: 10) { $0.hugeGapThreshold = 50 }
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.manager.pauseSync()
        for index in 0..<missing { try await harness.server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
        await harness.manager.resumeSync()
        await harness.settle()
        #expect((recorder.gapReports > 0) == reported)
        if !reported { #expect(await collection.succeededMessages == harness.serverMessages()) }
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    // 5. A view that reached the newest messages by another route did not follow.
    @Test func aViewAtMaxThatNeverFetchedTakesInLiveMessages() async throws {
        let harness = try await Harness.make(history: 10)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        #expect(recorder.events.isEmpty, "nothing happens before the app acts or the channel does")
        let live = try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        // The cache held nothing when the view opened, so all the device has learned since
        // is new to it: the newest page, ending with the live message.
        let shown = await collection.succeededMessages
        #expect(shown.last == live)
        #expect(shown == Array(await harness.serverMessages().suffix(shown.count)))
        let next = try await harness.server.post(.text("next"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages == shown + [next])
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    @Test func aViewAtMaxOpenedOnAWarmCacheTakesInOnlyWhatIsNew() async throws {
        let harness = try await Harness.make(history: 10)
        await harness.online()
        let (warm, _) = try await open(harness)
        _ = try await warm.fetchSucceededMessages(.previous)
        await warm.remove()
        await harness.manager.pauseSync()  // the channel is no longer live
        await harness.manager.resumeSync()
        await harness.settle()
        let (collection, recorder) = try await open(harness)
        let live = try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages == [live])
        _ = try await collection.fetchSucceededMessages(.previous)  // older ones come by fetching, without a hole
        #expect(await collection.succeededMessages == harness.serverMessages())
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    @Test func aViewAtMaxOpenedOfflineFollowsOnceOnline() async throws {
        let harness = try await Harness.make(history: 10)
        await harness.online()
        let (warm, _) = try await open(harness)
        _ = try await warm.fetchSucceededMessages(.previous)
        await warm.remove()
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let (collection, recorder) = try await open(harness, limit: 5)
        _ = try await collection.fetchSucceededMessages(.previous)  // the newest cached page
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        let live = try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages.last == live)
        #expect(await collection.succeededMessages == Array(await harness.serverMessages().suffix(6)))
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    // 6. A host-sent message stayed pending when its answer beat an echo without reqId.
    @Test func aHostSentMessageResolvesWhenItsAnswerBeatsAnEchoWithoutReqId() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.server.setEventsCarryReqId(false)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        let pending = Message(
            reqId: "host-1", channelURL: Harness.channel, senderId: "alice", text: "via my SDK", createdAt: 0, syncState: .syncing)
        try await collection.appendMessage(pending)
        await harness.server.holdEvents(for: "alice")
        let sent = try await harness.server.service(for: "alice").sendMessage(
            SendMessageRequest(reqId: "host-1", channelURL: Harness.channel, kind: .text, text: "via my SDK"))
        await collection.handleSendMessageResponse(sent, error: nil)
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await collection.succeededMessages.last?.messageId == sent.messageId)
        #expect(await collection.succeededMessages.last?.reqId == "host-1", "a synced message of this device keeps its reqId")
        #expect(await harness.manager.engine.outbox.awaitingEcho.isEmpty)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    // 7. A real-time message inside a complete range, while the channel is not live, was skipped.
    @Test func aPastDatedMessageInsideACompleteRangeIsNotSkipped() async throws {
        let harness = try await Harness.make(history: 60)
        await harness.online()
        let all = await harness.serverMessages()
        let (history, _) = try await open(harness, viewpoint: all[40].createdAt, limit: 30)
        _ = try await history.fetchSucceededMessages(.previous)  // caches a range in the middle; the channel is not live
        #expect(await harness.manager.engine.channels[Harness.channel]?.liveEdge == nil)
        let past = try await harness.server.post(.text("late"), from: "carol", to: Harness.channel, at: all[25].createdAt)
        await harness.settle()
        #expect(await history.succeededMessages.contains(past), "the open view covering it takes it in")
        let (later, recorder) = try await open(harness, viewpoint: all[40].createdAt, limit: 30)
        _ = try await later.fetchSucceededMessages(.previous)
        let shown = await later.succeededMessages
        #expect(shown == serverRange(await harness.serverMessages(), .init(), from: shown.first, to: shown.last))
        #expect(shown.contains(past), "a view opened later does not skip it")
        await checkInvariants(later, recorder)
        await harness.manager.close()
    }
}
