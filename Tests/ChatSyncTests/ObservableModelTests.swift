import ChatSyncTesting
import Testing

@testable import ChatSync

/// The observable models and further `events` consumers (issue 18). The generated tests
/// and the soak check them on every step (see `FurtherConsumers`); these pin the rules.
@Suite("Observable models and further consumers", .capturingLogs)
struct ObservableModelTests {
    /// Reads `stream` to its end (the collection was removed).
    private func drain<Event>(_ stream: AsyncStream<Event>) async -> [Event] {
        var events: [Event] = []
        for await event in stream { events.append(event) }
        return events
    }

    @Test func aSecondReadOfEventsIsASubscriptionThatStartsFromTheLists() async throws {
        let harness = try await Harness.make(history: 30)
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let first = collection.events
        try await collection.fetchSucceededMessages(.previous)
        let page = await collection.succeededMessages
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let pending = try await harness.manager.sendMessage(.text("mine"), channelURL: Harness.channel)
        let second = collection.events
        // Both loops run at once: neither takes the other's events.
        async let firstEvents = drain(first)
        async let secondEvents = drain(second)
        await harness.server.setOnline(true, for: "alice")
        try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        let lists = await (collection.succeededMessages, collection.pendingMessages, collection.failedMessages)
        #expect(lists.0.map(\.text).contains("live") && lists.0.count > page.count)
        await collection.remove()
        let (fromFirst, fromSecond) = await (firstEvents, secondEvents)
        for events in [fromFirst, fromSecond] {
            let replayed = replayEvents(events)
            #expect(replayed.succeeded == lists.0)
            #expect(replayed.pending == lists.1)
            #expect(replayed.failed == lists.2)
        }
        // The subscription is registered in the background, right after the read: it starts
        // with the lists as they were then, as one insertion (at least the page read before).
        guard case .succeeded(.insert, let snapshot) = fromSecond.first else {
            Issue.record("a subscription starts with an insertion of the succeeded list: \(String(describing: fromSecond.first))")
            return
        }
        #expect(snapshot.count >= page.count && snapshot == snapshot.sorted { $0.sortKey < $1.sortKey })
        let pendingInsertions = fromSecond.flatMap { event -> [Message] in
            if case .pending(.insert, let messages) = event { messages } else { [] }
        }
        #expect(pendingInsertions.map(\.reqId).contains(pending.reqId))
        #expect(await drain(collection.events).isEmpty, "a read after remove ends at once")
    }

    @Test func aSecondReadOfChannelEventsStartsFromTheLoadedChannels() async throws {
        let harness = try await Harness.make()
        for index in 0..<5 { try await harness.server.createChannel("c\(index)", members: ["alice"], name: "c\(index)") }
        await harness.online()
        let list = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 3))
        let first = list.events
        try await list.fetch()
        let page = await list.channels
        let second = list.events
        async let firstEvents = drain(first)
        async let secondEvents = drain(second)
        try await harness.server.post(.text("x"), from: "alice", to: "c0")
        try await list.fetch()
        await harness.settle()
        let channels = await list.channels
        await list.remove()
        let (fromFirst, fromSecond) = await (firstEvents, secondEvents)
        guard case .channels(.insert, let snapshot) = fromSecond.first else {
            Issue.record("a subscription starts with an insertion: \(String(describing: fromSecond.first))")
            return
        }
        #expect(snapshot.count >= page.count)
        for events in [fromFirst, fromSecond] {
            #expect(replayChannels(events, list.query) == channels)
        }
    }

    @MainActor
    @Test func theMessageModelFollowsTheCollectionAndReportsItsLoads() async throws {
        let harness = try await Harness.make(history: 25)
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let model = MessageCollectionModel(collection: collection)
        #expect(model.succeededMessages.isEmpty && model.hasOlder && !model.isLoadingOlder)
        await model.loadOlder()
        #expect(model.succeededMessages.map(\.text) == (15..<25).map { "h\($0)" }, "a load returns once the model shows it")
        #expect(model.hasOlder && !model.isLoadingOlder && model.lastError == nil)
        while model.hasOlder { await model.loadOlder() }
        #expect(model.succeededMessages == (await collection.succeededMessages))
        #expect(model.succeededMessages.count == 25)
        await model.loadNewer()
        #expect(!model.hasNewer, "a collection at the newest messages has nothing newer")
        // Live messages and the outbox reach the model without a load.
        try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let sent = try await harness.manager.sendMessage(.text("offline"), channelURL: Harness.channel)
        await model.catchUp()
        #expect(model.succeededMessages.last?.text == "live")
        #expect(model.pendingMessages.map(\.reqId) == [sent.reqId])
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        await model.catchUp()
        #expect(model.pendingMessages.isEmpty)
        #expect(model.succeededMessages.last?.reqId == sent.reqId)
        #expect(model.succeededMessages == (await collection.succeededMessages))
        await model.resetViewpoint(to: .max)
        #expect(model.succeededMessages.isEmpty && model.hasOlder)
    }

    @MainActor
    @Test func theMessageModelKeepsTheLastErrorAndClearsItOnSuccess() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        try await harness.server.removeMember("alice", from: Harness.channel)
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let model = MessageCollectionModel(collection: collection)
        await model.loadOlder()
        #expect(model.lastError is ChatServiceError, "a refusal for good is kept")
        #expect(model.succeededMessages.isEmpty && !model.isLoadingOlder)
        try await harness.server.addMember("alice", to: Harness.channel)
        await model.loadOlder()
        #expect(model.lastError == nil)
        #expect(model.succeededMessages.count == 5)
        await harness.manager.close()
        await model.loadOlder()
        #expect((model.lastError as? SyncManagerError)?.code == .closed)
        #expect(model.succeededMessages.count == 5, "a failed load leaves what the model shows")
    }

    @MainActor
    @Test func aModelOfARemovedCollectionShowsNothingAndNeverHangs() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        await collection.remove()
        let model = MessageCollectionModel(collection: collection)
        await model.catchUp()
        await model.loadOlder()
        #expect(model.succeededMessages.isEmpty)
        #expect((model.lastError as? SyncManagerError)?.code == .closed)
        let list = try await harness.manager.channelCollection()
        await list.remove()
        let listModel = ChannelCollectionModel(collection: list)
        await listModel.loadNextPage()
        #expect(listModel.channels.isEmpty && (listModel.lastError as? SyncManagerError)?.code == .closed)
    }

    @Test func aModelThatGoesAwayEndsItsSubscription() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        var model: MessageCollectionModel? = await MessageCollectionModel(collection: collection)
        await model?.loadOlder()
        #expect(await harness.manager.engine.subscriberCount(ofView: collection.id) == 1)
        model = nil
        #expect(await eventually { await harness.manager.engine.subscriberCount(ofView: collection.id) == 0 })
        // The collection goes on without it.
        try await collection.fetchSucceededMessages(.previous)
    }

    @MainActor
    @Test func theChannelModelFollowsTheListAcrossPagesAndMoves() async throws {
        let harness = try await Harness.make()
        for index in 0..<7 {
            try await harness.server.createChannel("c\(index)", members: ["alice", "bob"], name: "c\(index)")
            try await harness.server.post(.text("m"), from: "bob", to: "c\(index)")
        }
        await harness.online()
        let list = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 3))
        let model = ChannelCollectionModel(collection: list)
        await model.loadNextPage()
        #expect(model.channels.map(\.channelURL) == ["c6", "c5", "c4"], "newest last message first")
        #expect(model.hasMore && !model.isLoading)
        while model.hasMore { await model.loadNextPage() }
        #expect(model.channels.count == 8)
        try await harness.server.post(.text("up"), from: "bob", to: "c0")
        try await harness.server.deleteChannel("c3")
        await harness.settle()
        await model.catchUp()
        #expect(model.channels.first?.channelURL == "c0")
        #expect(!model.channels.contains { $0.channelURL == "c3" })
        #expect(model.channels == (await list.channels))
    }
}

/// The channel list `events` build (Guarantees: Channel list), sorted by the query's order.
func replayChannels(_ events: [ChannelCollectionEvent], _ query: ChannelListQuery) -> [Channel] {
    var list: [Channel] = []
    for case .channels(let action, let channels) in events {
        let urls = Set(channels.map(\.channelURL))
        switch action {
        case .insert: list += channels
        case .update: list = list.map { old in channels.first { $0.channelURL == old.channelURL } ?? old }
        case .move: list = list.filter { !urls.contains($0.channelURL) } + channels
        case .remove: list.removeAll { urls.contains($0.channelURL) }
        case .clear: list.removeAll()
        }
    }
    return list.sorted { query.order.sortsBefore($0, $1) }
}
