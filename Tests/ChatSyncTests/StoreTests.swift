import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

@Suite("Store", .capturingLogs)
struct StoreTests {
    /// Ten messages, three of them sharing createdAt 20 and two sharing 30, ids not in time order.
    private static let timeline: [Message] = [
        makeMessage(1, at: 10), makeMessage(5, at: 20), makeMessage(3, at: 20), makeMessage(4, at: 20),
        makeMessage(9, at: 30), makeMessage(8, at: 30), makeMessage(2, at: 40), makeMessage(6, at: 50),
        makeMessage(7, at: 60), makeMessage(10, at: 70),
    ]
    private static let ordered = timeline.sorted { $0.sortKey < $1.sortKey }

    private func store() throws -> ChatStore {
        let store = try ChatStore.open(path: nil, userId: "alice")
        var random = SeededGenerator(seed: 1)
        try store.upsertMessages(Self.timeline.shuffled(using: &random))
        try store.upsertMessages([makeMessage(100, at: 25, channel: "other")])
        return store
    }

    @Test func olderPagesWalkBackThroughTiesWithoutSkipsOrRepeats() throws {
        let store = try store()
        var anchor = MessageKey.max
        var seen: [Int64] = []
        while true {
            let page = try store.page(channelURL: "c", direction: .older, from: anchor, inclusive: false, limit: 2)
            if page.isEmpty { break }
            #expect(page == page.sorted { $0.sortKey < $1.sortKey }, "a page is ascending")
            seen.insert(contentsOf: page.map(\.messageId), at: 0)
            anchor = page[0].sortKey
        }
        #expect(seen == Self.ordered.map(\.messageId))
    }

    @Test func newerPagesWalkForwardThroughTiesWithoutSkipsOrRepeats() throws {
        let store = try store()
        var anchor = MessageKey.min
        var seen: [Int64] = []
        while true {
            let page = try store.page(channelURL: "c", direction: .newer, from: anchor, inclusive: false, limit: 3)
            if page.isEmpty { break }
            seen += page.map(\.messageId)
            anchor = page.last!.sortKey
        }
        #expect(seen == Self.ordered.map(\.messageId))
    }

    @Test func tiesAreOrderedByMessageId() throws {
        let page = try store().page(
            channelURL: "c", direction: .newer, from: MessageKey(createdAt: 20, messageId: .min),
            inclusive: true, limit: 5)
        #expect(page.map(\.messageId) == [3, 4, 5, 8, 9])
    }

    @Test func anchorsInsideATieAreExactAndInclusiveCountsTheAnchor() throws {
        let store = try store()
        let anchor = MessageKey(createdAt: 20, messageId: 4)
        #expect(try store.page(channelURL: "c", direction: .older, from: anchor, inclusive: false, limit: 10).map(\.messageId) == [1, 3])
        #expect(try store.page(channelURL: "c", direction: .older, from: anchor, inclusive: true, limit: 10).map(\.messageId) == [1, 3, 4])
        #expect(try store.page(channelURL: "c", direction: .newer, from: anchor, inclusive: false, limit: 2).map(\.messageId) == [5, 8])
        #expect(try store.page(channelURL: "c", direction: .newer, from: anchor, inclusive: true, limit: 2).map(\.messageId) == [4, 5])
    }

    @Test func boundsStopAPageAtAChunkEdge() throws {
        let store = try store()
        let page = try store.page(
            channelURL: "c", direction: .older, from: .max, inclusive: true,
            bound: MessageKey(createdAt: 30, messageId: 9), limit: 10)
        #expect(page.map(\.messageId) == [9, 2, 6, 7, 10])
        let forward = try store.page(
            channelURL: "c", direction: .newer, from: .min, inclusive: true,
            bound: MessageKey(createdAt: 20, messageId: 4), limit: 10)
        #expect(forward.map(\.messageId) == [1, 3, 4])
    }

    @Test func filtersApplyInTheQuerySoLimitsCountMatches() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        try store.upsertMessages([
            makeMessage(1, at: 1, sender: "bob"), makeMessage(2, at: 2, sender: "carol", kind: .image),
            makeMessage(3, at: 3, sender: "bob", kind: .custom, customType: "poll"), makeMessage(4, at: 4, sender: "bob"),
            makeMessage(5, at: 5, sender: "carol"),
        ])
        func ids(_ filter: MessageFilter, limit: Int = 10) throws -> [Int64] {
            try store.page(channelURL: "c", direction: .older, from: .max, inclusive: true, limit: limit, filter: filter).map(\.messageId)
        }
        #expect(try ids(MessageFilter(senderIds: ["bob"]), limit: 2) == [3, 4])
        #expect(try ids(MessageFilter(kinds: [.image])) == [2])
        #expect(try ids(MessageFilter(customTypes: ["poll"])) == [3])
        #expect(try ids(MessageFilter(customTypes: [""], senderIds: ["carol"])) == [2, 5])
        #expect(try store.countMessages(channelURL: "c", after: .min, before: .max, filter: MessageFilter(senderIds: ["bob"])) == 3)
    }

    @Test func upsertReplacesByIdAndKeepsEveryField() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        var message = Message(
            messageId: 1, reqId: "r", channelURL: "c", senderId: "alice", kind: .file, text: "t",
            customType: "ct", data: "d", file: FileInfo(name: "f.pdf", mimeType: "application/pdf", size: 9, url: "u"),
            parentMessageId: 77, createdAt: 5, updatedAt: 6)
        try store.upsertMessages([message])
        #expect(try store.message(channelURL: "c", messageId: 1) == message)
        #expect(try store.message(reqId: "r") == message)
        message.text = "edited"
        message.updatedAt = 9
        try store.upsertMessages([message])
        #expect(try store.message(channelURL: "c", messageId: 1)?.text == "edited")
        #expect(try store.countMessages(channelURL: "c", after: .min, before: .max) == 1)
        #expect(try store.deleteMessage(channelURL: "c", messageId: 1))
        #expect(try !store.deleteMessage(channelURL: "c", messageId: 1))
        #expect(try store.message(channelURL: "c", messageId: 1) == nil)
    }

    @Test func outboxListsInCreationOrderPerLane() async throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        let script: [(String, MessageKind)] = [
            ("T1", .text), ("I1", .image), ("I2", .image), ("T2", .custom),
            ("T3", .text), ("I3", .file), ("X1", .text),
        ]
        for (index, (name, kind)) in script.enumerated() {
            let channel = name == "X1" ? "other" : "c"
            let file = kind.hasAttachment ? FileInfo(name: name, mimeType: "image/png", size: 1, localPath: "/tmp/\(name)") : nil
            let entry = OutboxEntry(
                message: Message(
                    reqId: name, channelURL: channel, senderId: "alice", kind: kind,
                    text: name, file: file, createdAt: Int64(index), syncState: .created))
            let stored = try store.insertOutbox(entry)
            #expect(stored.seq > 0)
        }
        #expect(try store.outboxEntries(channelURL: "c", lane: .text).map(\.reqId) == ["T1", "T2", "T3"])
        #expect(try store.outboxEntries(channelURL: "c", lane: .media).map(\.reqId) == ["I1", "I2", "I3"])
        #expect(try store.outboxEntries().map(\.reqId) == ["T1", "I1", "I2", "T2", "T3", "I3", "X1"])
        #expect(try store.outboxEntry(reqId: "I1")?.message.file?.localPath == "/tmp/I1")
        #expect(try store.outboxEntry(reqId: "I1")?.message.file?.name == "I1")

        var failed = try #require(try store.outboxEntry(reqId: "T2"))
        failed.message.syncState = .failed
        failed.message.failure = SyncFailure(code: 403, message: "forbidden", isRetryable: false)
        failed.message.uploadProgress = 0.25
        failed.attempts = 3
        failed.resendAttempts = 2
        failed.failedAt = 99
        failed.textCorrected = true
        #expect(try store.updateOutbox(failed))
        #expect(try store.outboxEntry(reqId: "T2") == failed)
        #expect(try store.outboxEntries(states: [.failed]).map(\.reqId) == ["T2"])
        #expect(try store.outboxEntries(channelURL: "c", lane: .text, states: [.created]).map(\.reqId) == ["T1", "T3"])

        let code = await errorCode { _ = try store.insertOutbox(OutboxEntry(message: failed.message)) }
        #expect(code == .invalidParameter, "a reqId is in the outbox at most once")
        #expect(try store.deleteOutbox(reqId: "T1"))
        #expect(try store.outboxEntries(channelURL: "c", lane: .text).map(\.reqId) == ["T2", "T3"])

        // A lane's head skips what is not pending and what a host sends, and stays in its lane.
        let pending: Set<SyncState> = [.created, .uploading, .syncing]
        #expect(try store.laneHead(channelURL: "c", lane: .text, states: pending)?.reqId == "T3", "T2 failed")
        #expect(try store.laneHead(channelURL: "c", lane: .media, states: pending)?.reqId == "I1")
        #expect(try store.laneHead(channelURL: "other", lane: .text, states: pending)?.reqId == "X1")
        #expect(try store.laneHead(channelURL: "other", lane: .media, states: pending) == nil)
        var hosted = try #require(try store.outboxEntry(reqId: "I1"))
        hosted.origin = .host
        #expect(try store.updateOutbox(hosted))
        #expect(
            try store.laneHead(channelURL: "c", lane: .media, states: pending)?.reqId == "I2", "a host's entry is not the outbox's to send")
    }

    @Test func clearCacheDropsTheCacheButKeepsTheOutbox() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        try store.upsertMessages([makeMessage(1, at: 1)])
        try store.addChunk(Chunk(channelURL: "c", start: .min, end: MessageKey(createdAt: 1, messageId: 1)))
        try store.upsertChannels([Channel(channelURL: "c", createdAt: 1)])
        try store.setSyncToken("42", scope: ChatStore.messageTokenScope("c"))
        _ = try store.insertOutbox(
            OutboxEntry(
                message: Message(
                    reqId: "r1", channelURL: "c", senderId: "alice",
                    createdAt: 2, syncState: .created)))
        try store.clearCache()
        #expect(try store.countMessages(channelURL: "c", after: .min, before: .max) == 0)
        #expect(try store.chunks(channelURL: "c").isEmpty)
        #expect(try store.channels(matching: ChannelListQuery(order: .chronological)).isEmpty)
        #expect(try store.syncToken(scope: ChatStore.messageTokenScope("c")) == nil)
        #expect(try store.outboxEntries().map(\.reqId) == ["r1"])
    }

    @Test func channelsListInEachOrderWithFilters() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        try store.upsertChannels([
            Channel(channelURL: "a", name: "Bravo", customType: "team", createdAt: 30),
            Channel(channelURL: "b", name: "Alpha", createdAt: 10, lastMessage: makeMessage(1, at: 50, channel: "b")),
            Channel(channelURL: "c", name: "Charlie", customType: "team", createdAt: 20, lastMessage: makeMessage(2, at: 40, channel: "c")),
        ])
        func urls(_ order: ChannelOrder, includeEmpty: Bool = true, types: Set<String>? = nil) throws -> [String] {
            try store.channels(matching: ChannelListQuery(order: order, includeEmpty: includeEmpty, customTypes: types)).map(\.channelURL)
        }
        #expect(try urls(.latestLastMessage) == ["b", "c", "a"])
        #expect(try urls(.chronological) == ["a", "c", "b"])
        #expect(try urls(.channelNameAlphabetical) == ["b", "a", "c"])
        #expect(try urls(.chronological, includeEmpty: false) == ["c", "b"])
        #expect(try urls(.chronological, types: ["team"]) == ["a", "c"])
        let a = try #require(try store.channel("a"))
        let query = ChannelListQuery(order: .chronological)
        #expect(try store.channels(matching: query, after: a, limit: 1).map(\.channelURL) == ["c"])
        #expect(try store.channels(matching: query, through: try store.channel("c")).map(\.channelURL) == ["a", "c"])
        #expect(try store.channel("b")?.lastMessage?.messageId == 1)
        try store.deleteChannel("b")
        #expect(try store.channel("b") == nil)
    }

    /// Keyset pages in SQL agree with ``ChannelOrder/sortsBefore(_:_:)`` in every order and
    /// filter, across ties and names SQLite and Swift could compare differently (accents,
    /// composed and decomposed forms, case): paging from any channel to any other yields
    /// exactly the in-memory order's slice.
    @Test(arguments: 0..<20)
    func keysetPagesMatchTheInMemoryOrder(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed &+ 70_000)
        let store = try ChatStore.open(path: nil, userId: "alice")
        let names = ["Alpha", "alpha", "Zed", "\u{E9}cole", "e\u{301}cole", "\u{10348}", "", "Ω", "a b"]
        var channels: [Channel] = []
        for index in 0..<Int.random(in: 1...60, using: &random) {
            let last =
                Bool.random(using: &random)
                ? makeMessage(Int64(index + 1), at: Int64.random(in: 0...5, using: &random), channel: "c\(index)") : nil
            channels.append(
                Channel(
                    channelURL: "c\(Int.random(in: 0...999, using: &random))-\(index)", name: names.randomElement(using: &random)!,
                    customType: Bool.random(using: &random) ? "team" : "", createdAt: Int64.random(in: 0...5, using: &random),
                    lastMessage: last.map {
                        var m = $0; m.channelURL = "c\(index)"; return m
                    }))
        }
        try store.upsertChannels(channels)
        for order in ChannelOrder.allCases {
            for query in [
                ChannelListQuery(order: order), ChannelListQuery(order: order, includeEmpty: false),
                ChannelListQuery(order: order, customTypes: ["team"]),
            ] {
                let expected = channels.filter(query.matches).sorted { order.sortsBefore($0, $1) }
                #expect(try store.channels(matching: query).map(\.channelURL) == expected.map(\.channelURL), "\(query)")
                let from = Int.random(in: 0..<expected.count + 1, using: &random)
                let to = Int.random(in: from..<expected.count + 1, using: &random)
                let after = from > 0 ? expected[from - 1] : nil
                let through = to > from ? expected[to - 1] : nil
                let page = try store.channels(matching: query, after: after, through: through)
                let slice = expected[from..<(through == nil ? expected.count : to)]
                #expect(page.map(\.channelURL) == slice.map(\.channelURL), "seed \(seed) \(query) from \(from) to \(to)")
            }
        }
    }
}
