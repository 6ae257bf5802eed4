import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// Reads a channel collection's events as they come and replays them.
final class ChannelRecorder: Sendable {
    private final class Log: Sendable {
        let events = LockedState<[ChannelCollectionEvent]>([])
    }
    private let log = Log()
    let collection: ChannelCollection

    init(_ collection: ChannelCollection) {
        self.collection = collection
        let log = log
        Task { for await event in collection.events { log.events.withLock { $0.append(event) } } }
    }

    var events: [ChannelCollectionEvent] { log.events.withLock { $0 } }

    /// Waits until every event the collection emitted has been read.
    func drain(sourceLocation: SourceLocation = #_sourceLocation) async {
        let emitted = await collection.engine.channelEventCount(ofView: collection.id)
        #expect(await eventually { self.events.count >= emitted }, sourceLocation: sourceLocation)
    }

    /// The list the events build (Guarantees: Channel list), sorted by the query's order.
    func replay() -> [Channel] { replayChannels(events, collection.query) }

    func actions(for channelURL: String) -> [ChannelEventAction] {
        events.compactMap { event in
            guard case .channels(let action, let channels) = event, channels.contains(where: { $0.channelURL == channelURL }) else {
                return nil
            }
            return action
        }
    }
}

@Suite("ChannelCollection", .capturingLogs)
struct ChannelCollectionTests {
    /// Twelve channels for alice with varied names, types, creation times and messages.
    private func world(_ harness: Harness) async throws {
        let names = ["kilo", "alpha", "juliet", "bravo", "india", "charlie", "hotel", "delta", "golf", "echo", "foxtrot", "lima"]
        for (index, name) in names.enumerated() {
            try await harness.server.createChannel(
                "c\(index)", members: ["alice", "bob"], name: name, customType: index % 3 == 0 ? "team" : "")
            if index % 4 != 1 { try await harness.server.post(.text("hi \(name)"), from: "bob", to: "c\(index)") }
        }
        try await harness.server.post(.text("again"), from: "bob", to: "c5")
    }

    /// What the server says alice should see, in order.
    func expected(_ harness: Harness, _ query: ChannelListQuery) async -> [String] {
        var channels: [Channel] = []
        for index in 0..<200 {  // the generated schedules create up to about 190
            if let channel = await harness.server.channel("c\(index)"), channel.memberIds.contains("alice"), Self.lists(query, channel) {
                channels.append(channel)
            }
        }
        if let general = await harness.server.channel(Harness.channel), general.memberIds.contains("alice"), Self.lists(query, general) {
            channels.append(general)
        }
        return channels.sorted { query.order.sortsBefore($0, $1) }.map(\.channelURL)
    }

    /// Whether a service lists `channel` for `query`: custom types compared byte for byte,
    /// as services compare them (``ChannelListQuery/matches(_:)`` is what is under test).
    static func lists(_ query: ChannelListQuery, _ channel: Channel) -> Bool {
        (query.includeEmpty || channel.lastMessage != nil)
            && (query.customTypes?.contains { Array($0.utf8) == Array(channel.customType.utf8) } ?? true)
    }

    private func fetchAll(_ collection: ChannelCollection) async throws -> Int {
        var pages = 1
        while try await collection.fetch() { pages += 1 }
        return pages
    }

    @Test(arguments: [
        ChannelListQuery(order: .latestLastMessage, limit: 5), ChannelListQuery(order: .chronological, limit: 4),
        ChannelListQuery(order: .channelNameAlphabetical, limit: 3), ChannelListQuery(includeEmpty: false, limit: 5),
        ChannelListQuery(order: .chronological, customTypes: ["team"], limit: 2),
    ])
    func eachOrderAndFilterPagesToTheEnd(_ query: ChannelListQuery) async throws {
        let harness = try await Harness.make()
        try await world(harness)
        await harness.online()
        let collection = try await harness.manager.channelCollection(query: query)
        let recorder = ChannelRecorder(collection)
        let pages = try await fetchAll(collection)
        let want = await expected(harness, query)
        #expect(await collection.channels.map(\.channelURL) == want)
        #expect(pages == max(1, (want.count + query.limit - 1) / query.limit), "a page per \(query.limit) channels")
        await recorder.drain()
        #expect(recorder.replay() == (await collection.channels))
    }

    @Test func aPageShowsOnlyWhatItReached() async throws {
        let harness = try await Harness.make()
        try await world(harness)
        await harness.online()
        let query = ChannelListQuery(order: .channelNameAlphabetical, limit: 5)
        let collection = try await harness.manager.channelCollection(query: query)
        #expect(try await collection.fetch())
        #expect(await collection.channels.map(\.name) == ["General", "alpha", "bravo", "charlie", "delta"])
        // A new channel that sorts below the loaded page waits for its page.
        try await harness.server.createChannel("c20", members: ["alice"], name: "zulu")
        try await harness.server.createChannel("c21", members: ["alice"], name: "beta")
        await harness.settle()
        #expect(await collection.channels.map(\.name) == ["General", "alpha", "beta", "bravo", "charlie", "delta"])
    }

    @Test func newMessagesMoveChannelsReceivedOrSent() async throws {
        let harness = try await Harness.make()
        try await world(harness)
        await harness.online()
        let collection = try await harness.manager.channelCollection()
        let recorder = ChannelRecorder(collection)
        _ = try await fetchAll(collection)
        let last = try #require(await collection.channels.last?.channelURL)
        let received = try await harness.server.post(.text("news"), from: "bob", to: last)
        await harness.settle()
        #expect(await collection.channels.first?.channelURL == last)
        #expect(await collection.channels.first?.lastMessage == received)
        await recorder.drain()
        #expect(recorder.actions(for: last).contains(.move))

        let quiet = try #require(await collection.channels.last?.channelURL)
        let sent = try await harness.manager.sendMessage(.text("from me"), channelURL: quiet)
        await harness.settle()
        #expect(await collection.channels.first?.channelURL == quiet)
        #expect(await collection.channels.first?.lastMessage?.reqId == sent.reqId)
        await recorder.drain()
        #expect(recorder.replay() == (await collection.channels))
    }

    @Test func leavingOrDeletingRemovesAChannel() async throws {
        let harness = try await Harness.make()
        try await world(harness)
        await harness.online()
        let collection = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 50))
        let recorder = ChannelRecorder(collection)
        _ = try await collection.fetch()
        let messages = try await harness.manager.messageCollection(channelURL: "c3")
        let messageEvents = EventRecorder()
        await messages.setHandler(messageEvents)
        try await harness.server.removeMember("alice", from: "c2")
        try await harness.server.deleteChannel("c3")
        try await harness.server.updateChannel("c4", name: "renamed")
        await harness.settle()
        let urls = await collection.channels.map(\.channelURL)
        #expect(!urls.contains("c2") && !urls.contains("c3"))
        #expect(await collection.channels.first { $0.channelURL == "c4" }?.name == "renamed")
        await recorder.drain()
        #expect(recorder.actions(for: "c2").last == .remove)
        #expect(recorder.actions(for: "c3").last == .remove)
        #expect(messageEvents.events.contains(.channelRemoved("c3")))
        #expect(try harness.manager.engine.store.channel("c3") == nil)
        await recorder.drain()
        #expect(recorder.replay() == (await collection.channels))
    }

    /// The channel change logs at a reconnect usually tell of a channel whose last message
    /// was edited or deleted meanwhile, or that has a new one; while they fail, the message
    /// change logs and the catch-up of an open channel tell it too, and the list's preview
    /// follows them. (The Outbox model finds both with its channel change logs unanswered.)
    /// "edited, not cached": the collection is open on the channel's oldest messages, so
    /// the cache does not hold the last one that the change logs edit.
    @Test(arguments: ["edited", "deleted", "posted", "edited, not cached"])
    func anOpenChannelsSyncChangesThePreviewWhileChannelChangeLogsFail(change: String) async throws {
        let (harness, tokens) = try await Harness.makeWrapped(history: 30) { ChannelTokenRefusing($0) }
        await harness.online()
        let list = try await harness.manager.channelCollection()
        _ = try await list.fetch()
        let oldest = try #require(await harness.server.messages(in: Harness.channel).first)
        let messages = try await harness.manager.messageCollection(
            channelURL: Harness.channel, viewpoint: change == "edited, not cached" ? oldest.createdAt + 1 : .max, limit: 5)
        _ = try await messages.fetchSucceededMessages(.previous)
        await harness.settle()
        let last = try #require(await harness.server.channel(Harness.channel)?.lastMessage)
        await harness.manager.pauseSync()
        let cachedLast = try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: last.messageId)
        #expect(change != "edited, not cached" || cachedLast == nil, "the last message is not cached")
        switch change {
        case "edited", "edited, not cached":
            _ = try await harness.server.update(messageId: last.messageId, channelURL: Harness.channel, text: "edited")
        case "deleted": try await harness.server.delete(messageId: last.messageId, channelURL: Harness.channel)
        default: try await harness.server.post(.text("while away"), from: "bob", to: Harness.channel)
        }
        await tokens.failNextChangeLogs(1_000)
        await harness.manager.resumeSync()
        await harness.settle()
        let served = try #require(await harness.server.channel(Harness.channel)?.lastMessage)
        let shown = await list.channels.first { $0.channelURL == Harness.channel }?.lastMessage
        #expect(
            shown?.messageId == served.messageId && shown?.text == served.text,
            "the list shows \(String(describing: shown)), the service \(served)")
        await tokens.failNextChangeLogs(0)
        await messages.remove()
        await harness.manager.close()
    }

    @Test func changesDuringAPauseArriveByChangeLogs() async throws {
        let harness = try await Harness.make()
        try await world(harness)
        await harness.online()
        let collection = try await harness.manager.channelCollection(query: ChannelListQuery(order: .channelNameAlphabetical, limit: 50))
        let recorder = ChannelRecorder(collection)
        _ = try await collection.fetch()
        await harness.manager.pauseSync()
        try await harness.server.updateChannel("c0", name: "aardvark")
        try await harness.server.deleteChannel("c1")
        try await harness.server.createChannel("c30", members: ["alice"], name: "mike")
        try await harness.server.removeMember("alice", from: "c7")
        await harness.settle()
        #expect(await collection.channels.count == 13, "nothing applied while paused")
        await harness.manager.resumeSync()
        await harness.settle()
        let names = await collection.channels.map(\.name)
        #expect(names.prefix(2) == ["General", "aardvark"], "uppercase sorts first")
        #expect(names.contains("mike"))
        #expect(!names.contains("alpha") && !names.contains("delta"))
        #expect(await collection.channels.map(\.channelURL) == expected(harness, collection.query))
        await recorder.drain()
        #expect(recorder.replay() == (await collection.channels))
    }

    @Test func aReopenedManagerServesTheCachedListOffline() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        try await world(harness)
        await harness.online()
        let online = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 5))
        _ = try await fetchAll(online)
        let seen = await online.channels
        try await harness.relaunch()  // never resumed: offline
        let requests = await harness.server.requestCount
        let offline = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 5))
        #expect(try await offline.fetch())
        #expect(await offline.channels == Array(seen.prefix(5)))
        _ = try await fetchAll(offline)
        #expect(await offline.channels == seen)
        #expect(await harness.server.requestCount == requests)
    }

    @Test func badQueriesAndClosedManagersAreRefused() async throws {
        let harness = try await Harness.make()
        #expect(await errorCode { _ = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 0)) } == .invalidParameter)
        #expect(
            await errorCode { _ = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 101)) } == .invalidParameter)
        let collection = try await harness.manager.channelCollection()
        await collection.remove()
        #expect(await errorCode { _ = try await collection.fetch() } == .closed)
        await harness.manager.close()
        #expect(await errorCode { _ = try await harness.manager.channelCollection() } == .closed)
    }
}
