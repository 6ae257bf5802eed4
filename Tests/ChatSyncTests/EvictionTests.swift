import ChatSyncTesting
import Foundation
import GRDB
import Testing

@testable import ChatSync

/// `messageStoreCapacity`: the cache is trimmed in the background to its capacity,
/// least useful messages first, without ever lying about what it holds.
@Suite("Eviction", .capturingLogs)
struct EvictionTests {
    static let capacity = 200

    /// A harness whose cache keeps `capacity` messages, with channels `a` and `b` of `each`
    /// messages on the server besides "general".
    private func harness(each: Int, path: String? = nil, capacity: Int? = capacity) async throws -> Harness {
        let harness = try await Harness.make(databasePath: path) {
            $0.messageCollectionCapacity = 200
            $0.messageStoreCapacity = capacity
            $0.syncBatchSize = 50
        }
        for channelURL in ["a", "b"] {
            try await harness.server.createChannel(channelURL, members: ["alice", "bob"], name: channelURL)
            for index in 0..<each { try await harness.server.post(.text("\(channelURL)\(index)"), from: "bob", to: channelURL) }
        }
        await harness.online()
        return harness
    }

    /// Opens a collection on `channelURL`, scrolls back to its first message, closes it;
    /// answers what it showed.
    @discardableResult
    private func browse(_ harness: Harness, _ channelURL: String, pages: Int = .max) async throws -> [Message] {
        let collection = try await harness.manager.messageCollection(channelURL: channelURL, limit: 50)
        var fetched = 0
        while fetched < pages, try await collection.fetchSucceededMessages(.previous) { fetched += 1 }
        let shown = await collection.succeededMessages
        await collection.remove()
        await harness.settle()
        return shown
    }

    private func cachedCount(_ harness: Harness) throws -> Int { try harness.manager.engine.store.messageCount() }

    @Test func aCapacityBelowTheCollectionCapacityIsRefusedAtInit() async throws {
        var options = SyncManagerOptions()
        options.messageStoreCapacity = 199
        let server = SimulatedChatServer()
        await #expect {
            _ = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: nil, options: options)
        } throws: { ($0 as? SyncManagerError)?.code == .invalidParameter }
    }

    @Test func closedChannelsAreTrimmedAndScrollingBackResyncsEveryMessageOnce() async throws {
        let harness = try await harness(each: 300)
        try await browse(harness, "a")
        try await browse(harness, "b")
        #expect(try cachedCount(harness) <= Self.capacity, "trimmed to the capacity once nothing protects the rest")
        try await harness.expectChunksAreTrue("a")
        try await harness.expectChunksAreTrue("b")
        // Scrolled back to its first message again, the view's window is the oldest 200.
        let shown = try await browse(harness, "a")
        #expect(shown.map(\.messageId) == (await harness.server.messages(in: "a")).prefix(200).map(\.messageId))
        let all = try await harness.manager.messageCollection(channelURL: "a", limit: 50)
        try await all.resetViewpointTimestamp(0)
        while try await all.fetchSucceededMessages(.next) {}
        let ids = await all.succeededMessages.map(\.messageId)
        let server = await harness.server.messages(in: "a").map(\.messageId)
        #expect(ids == Array(server.suffix(ids.count)) && ids.count >= 200, "contiguous, each once: \(ids.count)")
        await all.remove()
        await harness.settle()
        try await harness.expectChunksAreTrue("a")
        await harness.manager.close()
    }

    @Test func openViewsTheOutboxAndQueuedWritesAreNeverEvicted() async throws {
        let harness = try await harness(each: 300)
        let open = try await harness.manager.messageCollection(channelURL: "a", limit: 50)
        for _ in 0..<3 { _ = try await open.fetchSucceededMessages(.previous) }
        let window = await open.succeededMessages
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let queued = try await harness.manager.sendMessage(.text("waiting"), channelURL: "b")
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        try await browse(harness, "b")
        try await browse(harness, Harness.channel)
        let store = harness.manager.engine.store
        for message in window {
            #expect(try store.message(channelURL: "a", messageId: message.messageId) != nil, "the open view's \(message.messageId)")
        }
        #expect(await open.succeededMessages == window)
        #expect(try harness.outbox().isEmpty || harness.outbox().map(\.reqId) == [queued.reqId])
        #expect(await harness.server.messages(in: "b").contains { $0.reqId == queued.reqId }, "the queued message was sent")
        await open.remove()
        await harness.manager.close()
    }

    @Test func offlineAnEvictedChannelServesOnlyWhatIsCachedAndSaysSo() async throws {
        let harness = try await harness(each: 300)
        try await browse(harness, "a")
        try await browse(harness, "b")
        await harness.manager.pauseSync()
        let collection = try await harness.manager.messageCollection(channelURL: "a", limit: 50)
        var hasMore = true
        for _ in 0..<10 where hasMore { hasMore = try await collection.fetchSucceededMessages(.previous) }
        let shown = await collection.succeededMessages.map(\.messageId)
        let server = await harness.server.messages(in: "a").map(\.messageId)
        #expect(hasMore, "the cache lacks the oldest messages: the end is not claimed")
        #expect(shown == Array(server.suffix(shown.count)), "a contiguous run up to the newest, nothing skipped")
        #expect(shown.count < server.count)
        await collection.remove()
        await harness.manager.close()
    }

    @Test func theCapacityIsEnforcedAtOpen() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await harness(each: 300, path: dir.path("cache.sqlite"), capacity: nil)
        try await browse(harness, "a")
        try await browse(harness, "b")
        #expect(try cachedCount(harness) >= 600)
        await harness.manager.close()
        harness.options.messageStoreCapacity = Self.capacity
        try await harness.reopen()
        await harness.settle()
        #expect(try cachedCount(harness) <= Self.capacity)
        try await harness.expectChunksAreTrue("a")
        try await harness.expectChunksAreTrue("b")
        await harness.manager.close()
    }

    @Test func theFileStopsGrowingOnceTrimmed() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        let harness = try await harness(each: 0, path: path)
        let mode = try harness.manager.engine.store.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") }
        #expect(mode == 2, "a new cache is created with incremental vacuum")
        var sizes: [Int] = []
        for round in 0..<6 {
            for index in 0..<6 {
                let channelURL = "r\(round)-\(index)"
                try await harness.server.createChannel(channelURL, members: ["alice", "bob"], name: channelURL)
                for text in 0..<120 {
                    try await harness.server.post(.text(String(repeating: "x", count: 200) + "\(text)"), from: "bob", to: channelURL)
                }
                try await browse(harness, channelURL)
            }
            // On the checkpoint connection, after its own: two checkpoints at once refuse each other.
            try harness.manager.engine.store.checkpointWholeLog()
            sizes.append(((try FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int) ?? 0)
        }
        #expect(try cachedCount(harness) <= Self.capacity)
        // The bound is what the rows the cache may hold take, whenever trims happen to run
        // relative to fetches: capacity plus the slack between trims, each row its 200-byte
        // text, payload and index entries and the free reserve (about 1,200 bytes measured),
        // with room. Had nothing been evicted the file would hold 4,320 such rows.
        let allowedRows = Self.capacity + Self.capacity / 10
        // Once trims run, new rows reuse what they free: the file levels off under that one
        // bound in every later round instead of growing with each. Up to a quarter of it
        // stays free as a reserve, so its size moves within the bound from round to round
        // (how far depends on when the last trim ran), which is why rounds are not compared
        // with each other.
        for (round, size) in sizes.enumerated().dropFirst(2) {
            #expect(size < allowedRows * 1_600, "round \(round): the file holds about the capacity: \(sizes)")
        }
        await harness.manager.close()
    }

    /// The range a page claims from an exclusive anchor shrinks to the page's own
    /// messages when the anchor left the cache while the request was out.
    @Test func aRangeNeverVouchesForAnEvictedAnchor() {
        func key(_ at: Int64) -> MessageKey { MessageKey(createdAt: at, messageId: at) }
        let claimed = Chunk(channelURL: "c", start: key(1), end: key(10))
        let batch = [3, 5, 7].map { makeMessage(Int64($0), at: Int64($0)) }
        let cached = [Chunk(channelURL: "c", start: key(10), end: key(20))]
        #expect(SyncEngine.provable(claimed, batch: batch, vouchedEdge: key(10), chunks: cached) == claimed)
        #expect(SyncEngine.provable(claimed, batch: batch, vouchedEdge: key(10), chunks: [])?.end == key(7))
        let newer = Chunk(channelURL: "c", start: key(1), end: key(9))
        #expect(SyncEngine.provable(newer, batch: batch, vouchedEdge: key(1), chunks: [])?.start == key(3))
        #expect(SyncEngine.provable(claimed, batch: [], vouchedEdge: key(10), chunks: []) == nil)
        #expect(SyncEngine.provable(claimed, batch: batch, vouchedEdge: nil, chunks: []) == claimed)
    }

    /// A collection opened on a channel while a trim is taking that channel's messages
    /// protects its window from the next step on: each step reads what open views hold
    /// again (a trim once read it per channel and went on evicting the new window).
    @Test func aViewOpenedMidTrimIsProtectedFromTheNextStep() async throws {
        // Room for `a` and `b` whole: the trim that `c` sets off finds all of `a` to take.
        let harness = try await harness(each: 300, capacity: 700)
        try await harness.server.createChannel("c", members: ["alice", "bob"], name: "c")
        for index in 0..<300 { try await harness.server.post(.text("c\(index)"), from: "bob", to: "c") }
        await harness.settle()
        try await browse(harness, "a")
        try await browse(harness, "b")
        let engine = harness.manager.engine
        await engine.setEvictionStepSize(5)
        let opened = LockedState<MessageCollection?>(nil)
        let manager = harness.manager
        await engine.setEvictionStepWitness { channelURL, _ in
            guard channelURL == "a", opened.withLock({ $0 == nil }) else { return }
            guard let collection = try? await manager.messageCollection(channelURL: "a", limit: 50) else { return }
            opened.withLock { $0 = collection }
            for _ in 0..<5 { _ = try? await collection.fetchSucceededMessages(.previous) }
        }
        try await browse(harness, "c")  // its pages set off trims, which reach `a` first
        await harness.settle()
        let view = try #require(opened.withLock { $0 }, "a trim reached `a` while `c` was browsed")
        let shown = await view.succeededMessages
        #expect(shown.count == 200, "a full window (the collection capacity)")
        let store = engine.store
        let evicted = try shown.filter { try store.message(channelURL: "a", messageId: $0.messageId) == nil }
        #expect(evicted.isEmpty, "the open view's messages left the cache: \(evicted.count) of \(shown.count)")
        await view.remove()
        await harness.manager.close()
    }

    /// A trim meets the channels it trimmed before first (least recently viewed), which
    /// hold their newest batch and nothing else, and the open channel, whose view is still
    /// scrolling back with nothing cached beyond its window: neither may cost a step. Each
    /// used to cost a write transaction that deleted nothing, so a trim's steps grew with
    /// the number of channels viewed before, and most of a long capped ingest's trimming
    /// was spent so.
    @Test func aTrimTakesNoStepThatRemovesNothing() async throws {
        let harness = try await harness(each: 300, capacity: 400)
        let others = ["c", "d", "e", "f", "g"]
        for channelURL in others {
            try await harness.server.createChannel(channelURL, members: ["alice", "bob"], name: channelURL)
            for index in 0..<300 { try await harness.server.post(.text("\(channelURL)\(index)"), from: "bob", to: channelURL) }
        }
        await harness.settle()
        let steps = LockedState<[(channel: String, removed: Int)]>([])
        await harness.manager.engine.setEvictionStepWitness { channelURL, removed in
            steps.withLock { $0.append((channelURL, removed)) }
        }
        for channelURL in ["a", "b"] + others { try await browse(harness, channelURL) }
        await harness.settle()
        let taken = steps.withLock { $0 }
        #expect(taken.count > 5, "trims ran: \(taken.count) steps")
        let empty = taken.filter { $0.removed == 0 }.map(\.channel)
        #expect(empty.isEmpty, "steps that removed nothing, in \(empty)")
        #expect(try cachedCount(harness) <= 400)
        for channelURL in ["a", "b"] + others { try await harness.expectChunksAreTrue(channelURL) }
        await harness.manager.close()
    }

    /// The trim's accounting: a failed first count does not end trimming, and a cache
    /// cleared during a trim is not taken for the trim's stale total.
    @Test func trimAccountingSurvivesAFailedCountAndAClearedCache() {
        var trimming = CacheTrimming(capacity: 1_000)
        #expect(trimming.slack == 100)
        let answer1 = trimming.begin()
        #expect(answer1)
        let answer2 = trimming.finish(remaining: nil)
        #expect(!answer2, "the count failed")
        let answer3 = trimming.noteWritten(50)
        #expect(!answer3)
        let answer4 = trimming.noteWritten(50)
        #expect(answer4, "never counted: the next slack of writes starts a counting trim")
        #expect(trimming.countsExactly)
        trimming.cacheCleared()
        _ = trimming.noteWritten(10)  // during the run
        let answer5 = trimming.finish(remaining: 950)
        #expect(!answer5, "the cleared cache holds only what came since")
        #expect(trimming.estimate == 10)
        #expect(!trimming.mayBeOver)
        let answer6 = trimming.noteWritten(980)
        #expect(!answer6, "990 written since the clear: within the capacity")
        let answer7 = trimming.noteWritten(20)
        #expect(answer7, "1,010: over the capacity, and more than the slack since the count")
        var running = CacheTrimming(capacity: 1_000)
        let began = running.begin()
        let closedDuringRun = running.viewClosed()
        #expect(began && !closedDuringRun, "a trim runs: the closed view's channel waits for its end")
        let again = running.finish(remaining: 1_050)
        #expect(again, "still over after that trim: another follows at once for the closed view's channel")
    }

    /// A trim set off by a collection's removal just before the manager closes may start,
    /// or reach its count, after the close: it ends quietly. Found by the sparse-filter
    /// generator, whose schedules end that way: the count read the closed in-memory
    /// cache and the process crashed (GRDB's `read` on a closed queue reaches SQLite with
    /// no connection).
    @Test func aTrimThatOutlivesTheManagerEndsQuietly() async throws {
        let harness = try await harness(each: 300)
        try await browse(harness, "a")
        let engine = harness.manager.engine
        await harness.manager.close()
        await engine.trimNow()  // a background trim that starts now
        #expect(throws: SyncManagerError.self) { try engine.store.evictionCensus(exact: true) }
        #expect(throws: SyncManagerError.self) { try engine.store.evictionCensus(exact: false) }
        do {
            _ = try engine.store.evictionCensus(exact: true)
        } catch let error as SyncManagerError {
            #expect(error.code == .closed, "the count after the close says the cache is closed: \(error)")
        }
    }

    /// A view whose edge message was deleted still holds the span up to that edge: a
    /// trim beyond the window must leave the range covering it, or a message dated into
    /// the span (between the deleted edge and the view's first message) is neither shown
    /// nor fetched later, and scrolling on skips it. Found by a read-only hunter, then by
    /// the model's `viewEdgeDeletedBeforeATrim` step.
    @Test(arguments: [Direction.previous, .next])
    func aTrimKeepsTheRangeUpToAViewsDeletedEdge(side: Direction) async throws {
        let harness = try await harness(each: 300)
        try await browse(harness, "a")
        let history = await harness.server.messages(in: "a")
        let middle = history[150]
        let view = try await harness.manager.messageCollection(channelURL: "a", viewpoint: middle.createdAt, limit: 40)
        _ = try await view.fetchSucceededMessages(.previous)
        _ = try await view.fetchSucceededMessages(.next)
        let shown = await view.succeededMessages
        let edge = try #require(side == .previous ? shown.first : shown.last)
        try await harness.server.delete(messageId: edge.messageId, channelURL: "a")
        await harness.settle()
        try await browse(harness, "b")  // over the capacity: trims take `a` beyond the view
        await harness.settle()
        await harness.manager.engine.trimNow(to: 0)  // and then everything that no view holds
        // The trim reached the view's edge: nothing of `a` beyond it is cached any more.
        let store = harness.manager.engine.store
        let beyond = try history.filter { message in
            guard side == .previous ? message.sortKey < edge.sortKey : message.sortKey > edge.sortKey else { return false }
            return try store.message(channelURL: "a", messageId: message.messageId) != nil
        }
        #expect(beyond.isEmpty, "the trim took everything beyond the view: \(beyond.count) left")
        try await harness.expectChunksAreTrue("a")
        // Dated into the span the view still holds: at the deleted oldest's time (after it),
        // or just before the deleted newest's.
        let at = side == .previous ? edge.createdAt : edge.createdAt - 1
        let dated = try await harness.server.post(.text("dated"), from: "bob", to: "a", at: at)
        await harness.settle()
        #expect(
            await view.succeededMessages.contains { $0.messageId == dated.messageId },
            "a message dated inside the view's span is shown")
        var more = true
        while more { more = try await view.fetchSucceededMessages(side) }
        let all = await view.succeededMessages.map(\.messageId)
        #expect(all.contains(dated.messageId), "scrolling on does not skip the dated message")
        #expect(Set(all).count == all.count, "every message once")
        try await harness.expectChunksAreTrue("a")
        await view.remove()
        await harness.manager.close()
    }

    /// A service page naming a channel twice shows it once (its last state), and the
    /// events replay to the list.
    @Test func aChannelNamedTwiceInOneChangeCountsOnce() async {
        let first = FirstEventStream<ChannelCollectionEvent>(unreadLimit: 1_000)
        let stream = first.take()!
        let view = ChannelView(id: 0, query: ChannelListQuery(order: .channelNameAlphabetical), events: first)
        view.isComplete = true
        let channel = Channel(channelURL: "x", name: "b", createdAt: 1)
        var renamed = channel
        renamed.name = "a"
        view.apply([("x", channel), ("x", renamed)])
        view.finish()
        var events: [ChannelCollectionEvent] = []
        for await event in stream { events.append(event) }
        #expect(view.channels == [renamed])
        #expect(events == [.channels(.insert, [renamed])])
    }
}
