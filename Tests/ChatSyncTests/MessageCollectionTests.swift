import ChatSyncTesting
import Testing

@testable import ChatSync

@Suite("MessageCollection", .capturingLogs)
struct MessageCollectionTests {
    private func open(
        _ harness: Harness, filter: MessageFilter = .init(), viewpoint: Int64 = .max, limit: Int = 50
    )
        async throws -> (MessageCollection, EventRecorder)
    {
        let collection = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: filter, viewpoint: viewpoint, limit: limit)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        return (collection, recorder)
    }

    @Test func theFirstPageAtViewpointMaxIsTheNewest() async throws {
        let harness = try await Harness.make(history: 120)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        let hasMore = try await collection.fetchSucceededMessages(.previous)
        #expect(hasMore)
        let all = await harness.serverMessages()
        #expect(await collection.succeededMessages == Array(all.suffix(50)))
        #expect(await collection.messageCount == 50)
        #expect(recorder.succeededEvents.allSatisfy { $0.0 == .insert })
        await checkInvariants(collection, recorder)
    }

    @Test func walkingBackReachesTheStartWithoutGapsOrDuplicates() async throws {
        let harness = try await Harness.make(history: 333) { $0.syncBatchSize = 40 }
        await harness.online()
        let (collection, recorder) = try await open(harness, limit: 30)
        var calls = 0
        while try await collection.fetchSucceededMessages(.previous) { calls += 1 }
        #expect(calls >= 11)
        #expect(await collection.succeededMessages == harness.serverMessages())
        await checkInvariants(collection, recorder)
        let requests = await harness.server.requestCount
        // A second walk from a new collection is served by the cache alone.
        let (again, _) = try await open(harness, limit: 100)
        while try await again.fetchSucceededMessages(.previous) {}
        #expect(await again.succeededMessages == harness.serverMessages())
        #expect(await harness.server.requestCount - requests <= 1, "at most a check for newer messages")
    }

    @Test func aViewpointInTheMiddleFetchesBothWays() async throws {
        let harness = try await Harness.make(history: 200) { $0.syncBatchSize = 25 }
        await harness.online()
        let all = await harness.serverMessages()
        let viewpoint = all[99].createdAt
        let (collection, recorder) = try await open(harness, viewpoint: viewpoint, limit: 30)
        #expect(try await collection.fetchSucceededMessages(.previous))
        #expect(await collection.succeededMessages == Array(all[70...99]))
        #expect(try await collection.fetchSucceededMessages(.next))
        #expect(await collection.succeededMessages == Array(all[70...129]))
        try await collection.fetchAllNextMessages()
        #expect(await collection.succeededMessages == Array(all[70...]))
        #expect(try await collection.fetchSucceededMessages(.next) == false)
        #expect(await collection.viewpoint == viewpoint)
        await checkInvariants(collection, recorder)
    }

    @Test func tiesOnCreatedAtAreNeitherSkippedNorRepeated() async throws {
        let harness = try await Harness.make { $0.syncBatchSize = 7 }
        for index in 0..<40 {
            try await harness.server.post(.text("t\(index)"), from: "bob", to: Harness.channel, at: 5_000 + Int64(index / 15))
        }
        await harness.online()
        let (collection, recorder) = try await open(harness, limit: 10)
        while try await collection.fetchSucceededMessages(.previous) {}
        #expect(await collection.succeededMessages == harness.serverMessages())
        await checkInvariants(collection, recorder)
        // And forward from a viewpoint inside a tie.
        let (forward, forwardRecorder) = try await open(harness, viewpoint: 5_000, limit: 4)
        while try await forward.fetchSucceededMessages(.previous) {}
        try await forward.fetchAllNextMessages()
        #expect(await forward.succeededMessages == harness.serverMessages())
        await checkInvariants(forward, forwardRecorder)
    }

    @Test func aWarmCacheIsServedOfflineWithoutRequests() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(history: 150, databasePath: dir.path("cache.sqlite"))
        await harness.online()
        let (warm, _) = try await open(harness, limit: 50)
        while try await warm.fetchSucceededMessages(.previous) {}
        try await harness.relaunch()  // a new process, never resumed: offline
        let requests = await harness.server.requestCount
        let (collection, recorder) = try await open(harness, limit: 50)
        #expect(try await collection.fetchSucceededMessages(.previous), "offline the end is not known")
        #expect(await collection.succeededMessages == Array(harness.serverMessages().suffix(50)))
        while try await collection.fetchSucceededMessages(.previous) {}
        #expect(await collection.succeededMessages == harness.serverMessages(), "the start is known from the cache")
        #expect(await harness.server.requestCount == requests)
        await checkInvariants(collection, recorder)
    }

    @Test func aColdCacheOfflineReturnsAtOnce() async throws {
        let harness = try await Harness.make(history: 10)
        let (collection, recorder) = try await open(harness)
        #expect(try await collection.fetchSucceededMessages(.previous))
        #expect(try await collection.fetchSucceededMessages(.next))
        #expect(await collection.succeededMessages.isEmpty)
        #expect(await harness.server.requestCount == 0)
        #expect(recorder.events.isEmpty)
        // Offline after having been online: still no request.
        await harness.online()
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let requests = await harness.server.requestCount
        // While online, the reconnect proved the channel (empty) live for the view at `.max`:
        // the cache knows its whole range, so the end is known.
        #expect(try await collection.fetchSucceededMessages(.previous) == false)
        #expect(await harness.server.requestCount == requests)
    }

    @Test func aSecondFetchInTheSameDirectionThrowsDuplicatedFetch() async throws {
        let harness = try await Harness.make(history: 30)
        await harness.online()
        let (collection, _) = try await open(harness, limit: 10)
        await harness.server.holdRequests()
        let first = Task { try await collection.fetchSucceededMessages(.previous) }
        #expect(await eventually { await harness.server.heldRequestCount > 0 })
        #expect(await errorCode { _ = try await collection.fetchSucceededMessages(.previous) } == .duplicatedFetch)
        let opposite = Task { try await collection.fetchSucceededMessages(.next) }
        await harness.server.releaseRequests()
        #expect(try await first.value)
        _ = try await opposite.value
        #expect(await collection.messageCount >= 10)
        #expect(try await collection.fetchSucceededMessages(.previous), "free again afterwards")
    }

    @Test func theViewIsTrimmedFromTheOppositeEndAtCapacity() async throws {
        let harness = try await Harness.make(history: 600) { $0.messageCollectionCapacity = 200 }
        await harness.online()
        let all = await harness.serverMessages()
        let (collection, recorder) = try await open(harness, limit: 90)
        for _ in 0..<3 { _ = try await collection.fetchSucceededMessages(.previous) }
        #expect(await collection.succeededMessages == Array(all[330..<530]), "270 fetched, the 70 newest trimmed")
        let removals = recorder.succeededEvents.filter { $0.0 == .remove }.flatMap(\.1)
        #expect(removals.map(\.messageId) == all[530...].map(\.messageId))
        #expect(try await collection.fetchSucceededMessages(.next) == false, "only 70 newer exist")
        #expect(await collection.succeededMessages == Array(all.suffix(200)), "the 70 oldest trimmed")
        await checkInvariants(collection, recorder)
        // At the newest edge again, so live messages enter and push the oldest out.
        let live = try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages.last == live)
        #expect(await collection.messageCount == 200)
        await checkInvariants(collection, recorder)
    }

    @Test func resettingTheViewpointClearsOnceAndRestartsThere() async throws {
        let harness = try await Harness.make(history: 100)
        await harness.online()
        let all = await harness.serverMessages()
        let (collection, recorder) = try await open(harness, limit: 20)
        _ = try await collection.fetchSucceededMessages(.previous)
        recorder.reset()
        try await collection.resetViewpointTimestamp(all[40].createdAt)
        #expect(recorder.events == [.succeeded(.clear, [])])
        #expect(await collection.succeededMessages.isEmpty)
        #expect(await collection.viewpoint == all[40].createdAt)
        _ = try await collection.fetchSucceededMessages(.next)
        #expect(await collection.succeededMessages == Array(all[41...60]))
        _ = try await collection.fetchSucceededMessages(.previous)
        #expect(await collection.succeededMessages == Array(all[21...60]))
        recorder.reset()
        try await collection.resetViewpointTimestamp(.max)
        _ = try await collection.fetchSucceededMessages(.previous)
        #expect(await collection.succeededMessages == Array(all.suffix(20)))
        #expect(recorder.replay().succeeded == Array(all.suffix(20)))
    }

    @Test(arguments: [
        MessageFilter(kinds: [.custom]), MessageFilter(customTypes: ["poll"]), MessageFilter(senderIds: ["carol"]),
        MessageFilter(kinds: [.text], senderIds: ["bob"]),
    ])
    func filtersNarrowCacheReadsSyncAndLiveEvents(_ filter: MessageFilter) async throws {
        let harness = try await Harness.make { $0.syncBatchSize = 10 }
        for index in 0..<90 {
            let params: MessageParams =
                index % 3 == 0 ? .custom(customType: index % 2 == 0 ? "poll" : "note", data: "") : .text("t\(index)")
            try await harness.server.post(params, from: index % 4 == 0 ? "carol" : "bob", to: Harness.channel)
        }
        await harness.online()
        let (collection, recorder) = try await open(harness, filter: filter, limit: 5)
        while try await collection.fetchSucceededMessages(.previous) {}
        #expect(await collection.succeededMessages == harness.serverMessages(filter))
        try await harness.server.post(.custom(customType: "poll", data: ""), from: "carol", to: Harness.channel)
        try await harness.server.post(.text("plain"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages == harness.serverMessages(filter))
        #expect(recorder.newMessages.allSatisfy(filter.matches))
        await checkInvariants(collection, recorder)
    }

    @Test func liveMessagesEnterOnlyViewsAtTheNewestEdge() async throws {
        let harness = try await Harness.make(history: 100)
        await harness.online()
        let all = await harness.serverMessages()
        let (newest, newestRecorder) = try await open(harness, limit: 20)
        _ = try await newest.fetchSucceededMessages(.previous)
        let (middle, middleRecorder) = try await open(harness, viewpoint: all[50].createdAt, limit: 20)
        _ = try await middle.fetchSucceededMessages(.previous)
        _ = try await middle.fetchSucceededMessages(.next)
        let before = await middle.succeededMessages

        let live = try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await newest.succeededMessages.last == live)
        #expect(await middle.succeededMessages == before, "a view away from the newest edge stays put")
        #expect(newestRecorder.newMessages == [live])
        #expect(middleRecorder.newMessages == [live], ".newMessage whether or not it was inserted")
        await checkInvariants(newest, newestRecorder)
        await checkInvariants(middle, middleRecorder)

        // The middle view reaches the edge with .next and then follows it.
        try await middle.fetchAllNextMessages()
        let next = try await harness.server.post(.text("next"), from: "carol", to: Harness.channel)
        await harness.settle()
        #expect(await middle.succeededMessages.last == next)
        await checkInvariants(middle, middleRecorder)
    }

    @Test func anEmptyChannelFollowsItsFirstMessages() async throws {
        let harness = try await Harness.make()
        await harness.online()
        let (collection, recorder) = try await open(harness)
        #expect(try await collection.fetchSucceededMessages(.previous) == false)
        let first = try await harness.server.post(.text("first"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages == [first])
        await checkInvariants(collection, recorder)
    }

    @Test func ownMessagesGiveNoNewMessageEvent() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        let mine = try await harness.server.post(.text("from my other device"), from: "alice", to: Harness.channel)
        let theirs = try await harness.server.post(.text("from bob"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(recorder.newMessages == [theirs])
        #expect(await collection.succeededMessages.suffix(2) == [mine, theirs])
    }

    @Test func editsAndDeletionsApplyLive() async throws {
        let harness = try await Harness.make(history: 30)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        let all = await harness.serverMessages()
        let edited = try await harness.server.update(messageId: all[10].messageId, channelURL: Harness.channel, text: "edited")
        try await harness.server.delete(messageId: all[20].messageId, channelURL: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages == harness.serverMessages())
        #expect(await collection.succeededMessages.contains(edited))
        #expect(recorder.succeededEvents.contains { $0.0 == .update && $0.1 == [edited] })
        #expect(recorder.succeededEvents.contains { $0.0 == .remove && $0.1.map(\.messageId) == [all[20].messageId] })
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: all[20].messageId) == nil)
        await checkInvariants(collection, recorder)
    }

    @Test func editsAndDeletionsMadeDuringAPauseArriveByChangeLogs() async throws {
        let harness = try await Harness.make(history: 60)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.manager.pauseSync()
        let all = await harness.serverMessages()
        try await harness.server.update(messageId: all[20].messageId, channelURL: Harness.channel, text: "changed while away")
        try await harness.server.delete(messageId: all[30].messageId, channelURL: Harness.channel)
        try await harness.server.update(messageId: all[5].messageId, channelURL: Harness.channel, text: "not in the view")
        let newer = try await harness.server.post(.text("newer"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages.count == 50, "nothing applied while paused")
        await harness.manager.resumeSync()
        await harness.settle()
        let expected = Array(await harness.serverMessages().suffix(50))
        #expect(await collection.succeededMessages.suffix(49) == expected.suffix(49))
        #expect(await collection.succeededMessages.last == newer, "the view at the newest edge caught up")
        #expect(
            try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: all[5].messageId)?.text == "not in the view")
        await checkInvariants(collection, recorder)
    }

    @Test func aLongOfflinePeriodReportsAHugeGapInsteadOfSyncingItAll() async throws {
        let harness = try await Harness.make(history: 50) {
            $0.hugeGapThreshold = 100; $0.syncBatchSize = 30
        }
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        let before = await collection.succeededMessages
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<250 { try await harness.server.post(.text("missed \(index)"), from: "bob", to: Harness.channel) }
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(recorder.gapCount == 1)
        #expect(await collection.succeededMessages == before, "the gap is not synced into the view")
        #expect(await harness.server.requestCount < 20)
        try await collection.resetViewpointTimestamp(.max)
        _ = try await collection.fetchSucceededMessages(.previous)
        #expect(await collection.succeededMessages == Array(harness.serverMessages().suffix(50)))
        await checkInvariants(collection, recorder)
    }

    /// Found by the model test's lossy returns: each try of the catch-up got one page and
    /// ended short, and the retry counted from zero, so the whole gap was synced.
    @Test func aHugeGapIsReportedThoughEveryOtherCatchUpPageIsLost() async throws {
        let (harness, losses) = try await Harness.makeWrapped(
            history: 50,
            configure: {
                $0.hugeGapThreshold = 100; $0.syncBatchSize = 30
            },
            wrapper: { EveryOtherRequestLost(base: $0, losing: .newerPages) })
        let (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        let before = await collection.succeededMessages
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<250 { try await harness.server.post(.text("missed \(index)"), from: "bob", to: Harness.channel) }
        await losses.startLosing()
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await losses.lost >= 3, "the catch-up's tries ended short, again and again")
        #expect(recorder.gapCount == 1)
        #expect(await collection.succeededMessages == before, "the gap is not synced into the view")
        await checkInvariants(collection, recorder)
    }

    @Test func aShortOfflinePeriodIsCaughtUpWithoutAGap() async throws {
        let harness = try await Harness.make(history: 50) {
            $0.hugeGapThreshold = 100; $0.syncBatchSize = 30
        }
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<70 { try await harness.server.post(.text("missed \(index)"), from: "bob", to: Harness.channel) }
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(recorder.gapCount == 0)
        let all = await harness.serverMessages()
        #expect(await collection.succeededMessages == Array(all.suffix(120)))
        await checkInvariants(collection, recorder)
    }

    @Test func fetchesWorkWhileTheRealTimeStreamConnectsAndTheViewFollowsOnceItIsUp() async throws {
        let server = SimulatedChatServer()
        try await server.createChannel(Harness.channel, members: ["alice", "bob"])
        for index in 0..<30 { try await server.post(.text("h\(index)"), from: "bob", to: Harness.channel) }
        let service = ControlledService(server.service(for: "alice"), startsConnecting: true)
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        let manager = try await SyncManager(userId: "alice", service: service, databasePath: nil, options: options)
        await manager.resumeSync()
        #expect(await manager.connectionState == .connecting)
        let collection = try await manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        #expect(try await collection.fetchSucceededMessages(.previous), "requests work while connecting")
        #expect(await collection.succeededMessages == Array(server.messages(in: Harness.channel).suffix(10)))
        #expect(try await collection.fetchSucceededMessages(.next) == false, "the newest, as far as anyone knows")
        // Posted while the stream was not up: no event reaches alice, so only catch-up can bring it.
        let missed = try await server.post(.text("missed"), from: "bob", to: Harness.channel)
        await service.finishConnecting()
        #expect(await eventually { await collection.succeededMessages.last == missed })
        let live = try await server.post(.text("live"), from: "bob", to: Harness.channel)
        #expect(await eventually { await collection.succeededMessages.last == live })
        #expect(await collection.succeededMessages.count == 12)
        await checkInvariants(collection, recorder)
        await manager.close()
    }

    @Test func removeSilencesACollection() async throws {
        let harness = try await Harness.make(history: 10)
        await harness.online()
        let (collection, recorder) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        await collection.remove()
        let count = recorder.events.count
        try await harness.server.post(.text("after remove"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(recorder.events.count == count)
        #expect(await errorCode { _ = try await collection.fetchSucceededMessages(.previous) } == .closed)
        #expect(await collection.succeededMessages.isEmpty)
        var iterator = collection.events.makeAsyncIterator()
        var streamed = 0
        while await iterator.next() != nil { streamed += 1 }
        #expect(streamed == count, "the stream holds what was sent before remove, then ends")
    }

    @Test func closingTheManagerEndsCollections() async throws {
        let harness = try await Harness.make(history: 10)
        let (collection, _) = try await open(harness)
        await harness.manager.close()
        #expect(await errorCode { _ = try await collection.fetchSucceededMessages(.previous) } == .closed)
        #expect(await errorCode { _ = try await harness.manager.messageCollection(channelURL: Harness.channel) } == .closed)
    }

    @Test func badArgumentsAreRefused() async throws {
        let harness = try await Harness.make()
        #expect(await errorCode { _ = try await harness.manager.messageCollection(channelURL: "") } == .invalidParameter)
        #expect(await errorCode { _ = try await harness.manager.messageCollection(channelURL: "c", limit: 0) } == .invalidParameter)
        #expect(await errorCode { _ = try await harness.manager.messageCollection(channelURL: "c", limit: 1001) } == .invalidParameter)
        // A NUL in a key: rows found by it through GRDB, which reads text only up to a NUL, would be lost.
        #expect(await errorCode { _ = try await harness.manager.messageCollection(channelURL: "c\u{0}d") } == .invalidParameter)
        #expect(await errorCode { _ = try await harness.manager.sendMessage(.text("x"), channelURL: "c\u{0}d") } == .invalidParameter)
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let hostMessage = Message(
            reqId: "host\u{0}1", channelURL: Harness.channel, senderId: "alice", text: "x", createdAt: 0, syncState: .syncing)
        #expect(await errorCode { try await collection.appendMessage(hostMessage) } == .invalidParameter)
        #expect(try harness.outbox().isEmpty, "nothing was queued")
    }

    /// A message the host's SDK sends is the user's own: one from anyone else, even from a
    /// zoë whose id Swift's `==` takes for the user's, is refused and queues nothing; an
    /// empty sender becomes the user.
    @Test func anAppendedMessageIsTheUsersOwnByTheBytesOfItsSender() async throws {
        let (user, lookalike) = ("zo\u{EB}", "zoe\u{308}")
        let harness = try await Harness.make(userId: user)
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        for (reqId, sender) in [("host-bob", "bob"), ("host-lookalike", lookalike)] {
            let theirs = Message(
                reqId: reqId, channelURL: Harness.channel, senderId: sender, text: "x", createdAt: 1, syncState: .syncing)
            #expect(await errorCode { try await collection.appendMessage(theirs) } == .invalidParameter, "\(reqId)")
        }
        #expect(try harness.outbox().isEmpty, "nothing was queued")
        for (reqId, sender) in [("host-own", user), ("host-unnamed", "")] {
            try await collection.appendMessage(
                Message(reqId: reqId, channelURL: Harness.channel, senderId: sender, text: "x", createdAt: 1, syncState: .syncing))
        }
        let pending = await collection.pendingMessages
        #expect(pending.map(\.reqId).sorted() == ["host-own", "host-unnamed"])
        #expect(pending.allSatisfy { $0.senderId.utf8.elementsEqual(user.utf8) })
    }

    /// A deletion the host made through its own SDK, named with a channel URL holding a
    /// NUL: GRDB would bind that URL cut at the NUL and delete another channel's message.
    @Test func aHostDeletionWithANulInItsChannelIsRefusedAndDeletesNothing() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let (collection, _) = try await open(harness)
        _ = try await collection.fetchSucceededMessages(.previous)
        let cached = try #require(await harness.server.messages(in: Harness.channel).last)
        var named = cached
        named.channelURL = Harness.channel + "\u{0}elsewhere"
        #expect(await errorCode { try await collection.deleteMessage(named) } == .invalidParameter)
        #expect(await errorCode { try await collection.updateMessage(named) } == .invalidParameter)
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: cached.messageId) != nil)
        #expect(await collection.messageCount == 5)
    }

    @Test func theEventStreamCarriesTheSameEventsAsTheHandler() async throws {
        let harness = try await Harness.make(history: 30)
        await harness.online()
        let (collection, recorder) = try await open(harness, limit: 10)
        _ = try await collection.fetchSucceededMessages(.previous)
        _ = try await collection.fetchSucceededMessages(.previous)
        try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        await collection.remove()
        var streamed: [MessageCollectionEvent] = []
        for await event in collection.events { streamed.append(event) }
        #expect(streamed == recorder.events)
        #expect(streamed.count >= 3)
    }

    /// Background work can emit between the collection's creation and `setHandler`; an app
    /// cannot close that window, so the first handler set before any fetch gets those events.
    @Test func aHandlerSetBeforeTheFirstFetchSeesWhatArrivedSinceTheCollectionOpened() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        let shown = await collection.succeededMessages
        #expect(shown.map(\.text).contains("live"), "the live message entered the fresh view before any handler was set")
        #expect(recorder.replay().succeeded == shown)
        await checkInvariants(collection, recorder)
        // The same events as the stream, in the same order, from here on too.
        _ = try await collection.fetchSucceededMessages(.previous)
        await collection.remove()
        var streamed: [MessageCollectionEvent] = []
        for await event in collection.events { streamed.append(event) }
        #expect(streamed == recorder.events)
    }

    /// Once the app has fetched (or read a list) what came before is in what it has: a
    /// handler set after that gets what follows only, or the app would show it twice.
    @Test func aHandlerSetAfterTheFirstFetchGetsWhatFollows() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        _ = try await collection.fetchSucceededMessages(.previous)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        #expect(recorder.events.isEmpty)
        try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(recorder.newMessages.map(\.text) == ["live"])
        // Reading a list counts the same: a second collection, read and then handled.
        let second = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        try await harness.server.post(.text("before the read"), from: "bob", to: Harness.channel)
        await harness.settle()
        let read = await second.succeededMessages
        let late = EventRecorder()
        await second.setHandler(late)
        #expect(read.map(\.text).contains("before the read"))
        #expect(late.events.isEmpty, "what the app read is not sent to its handler again")
    }
}
