import ChatSyncTesting
import Testing

@testable import ChatSync

/// Answers that decode but describe the wrong thing, each found by the hostile-response
/// fuzzing (`HostileResponseTests`; seeds 0, 1, 6, 107 and 149 are in its CI range).
@Suite("Malformed answers", .capturingLogs)
struct MalformedAnswerTests {
    private func makeHarness(history: Int = 0) async throws -> (Harness, HostileService) {
        let server = SimulatedChatServer()
        try await server.createChannel(Harness.channel, members: ["alice", "bob"])
        for index in 0..<history { try await server.post(.text("h\(index)"), from: "bob", to: Harness.channel) }
        let hostile = HostileService(server.service(for: "alice"), seed: 1, rate: 0)
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        options.sendRetryLimit = 3
        let manager = try await SyncManager(userId: "alice", service: hostile, databasePath: nil, options: options)
        let harness = Harness(server: server, manager: manager, path: nil, options: options)
        await manager.resumeSync()
        await harness.settle()
        return (harness, hostile)
    }

    @Test(arguments: ["another channel", "no id", "another reqId"])
    func aSendAnswerDescribingAnotherMessageIsRetriedNotTrusted(_ how: String) async throws {
        let (harness, hostile) = try await makeHarness()
        await hostile.rewriteNextSend { sent in
            var bad = sent
            switch how {
            case "another channel": bad.channelURL = "elsewhere"
            case "no id": bad.messageId = -3
            default: bad.reqId = "someone-else"
            }
            return bad
        }
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let message = try await harness.manager.sendMessage(.text("hello"), channelURL: Harness.channel)
        await harness.settle(extraEvents: { await hostile.addedEvents })
        let stored = await harness.server.messages(in: Harness.channel)
        #expect(stored.map(\.reqId) == [message.reqId], "stored once: the retry got the stored message back")
        #expect(try harness.outbox().isEmpty)
        #expect(await harness.manager.message(reqId: message.reqId)?.messageId == stored.first?.messageId)
        let elsewhere = try harness.manager.engine.store.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM message WHERE channel_url != ? OR message_id <= 0", arguments: [Harness.channel])
        }
        #expect(elsewhere == 0, "nothing cached from the bad answer")
        _ = try await collection.fetchSucceededMessages(.previous)
        #expect(await collection.succeededMessages.map(\.reqId) == [message.reqId])
    }

    @Test func aCopyThatMovesAMessageInTimeKeepsViewsSortedAndEditsInPlace() async throws {
        let (harness, hostile) = try await makeHarness(history: 5)
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        let settle = { await harness.settle(extraEvents: { await hostile.addedEvents }) }
        await settle()
        let original = try #require(await collection.succeededMessages.last)

        // An "edit" that moves the message to the start of time is not applied anywhere.
        var moved = original
        moved.createdAt = 1
        moved.text = "moved"
        moved.updatedAt = original.updatedAt + 1
        await hostile.inject(.messageUpdated(moved))
        await settle()
        #expect(await collection.succeededMessages.last == original)
        #expect(
            try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: original.messageId)?.createdAt
                == original.createdAt)

        // A real-time copy at another time: the list stays sorted, the message once.
        await hostile.inject(.messageReceived(moved))
        await settle()
        let succeeded = await checkInvariants(collection, recorder)
        #expect(succeeded.filter { $0.messageId == original.messageId }.count <= 1)
    }

    /// Hostile seed 7702 (found under load; the order of events and syncs decides it): a
    /// real-time copy of a new message dated hours later reached a view that had just
    /// started following the newest messages, then the true copy came. The cache moved the
    /// message back to its true time, but the view no longer reached that far back and
    /// kept the copy at the later time; the message's edits, which never move a message,
    /// then reached the cache and not the view.
    @Test func aViewFollowsTheCacheWhenACopyDatedElsewhereIsReplaced() async throws {
        let (harness, hostile) = try await makeHarness(history: 5)
        let settle = { await harness.settle(extraEvents: { await hostile.addedEvents }) }
        // The channel is live; a second view at the newest end was never fetched.
        let reader = try await harness.manager.messageCollection(channelURL: Harness.channel)
        _ = try await reader.fetchSucceededMessages(.previous)
        await settle()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        await settle()

        await harness.server.holdEvents(for: "alice")
        let posted = try await harness.server.post(.text("new"), from: "bob", to: Harness.channel)
        var later = posted
        later.createdAt = posted.createdAt + 10_000_000
        await hostile.inject(.messageReceived(later))
        await harness.server.releaseEvents(for: "alice")
        await settle()
        let cached = try #require(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: posted.messageId))
        #expect(cached.createdAt == posted.createdAt, "the cache holds the message at its true time")
        for view in [collection, reader] {
            let shown = await view.succeededMessages.filter { $0.messageId == posted.messageId }
            #expect(shown.allSatisfy { $0 == cached }, "a view shows the message where the cache holds it: \(shown)")
        }

        _ = try await harness.server.update(messageId: posted.messageId, channelURL: Harness.channel, text: "edited")
        await settle()
        for view in [collection, reader] {
            let shown = await view.succeededMessages.filter { $0.messageId == posted.messageId }
            #expect(shown.allSatisfy { $0.text == "edited" }, "the edit reaches every view that shows the message: \(shown)")
        }
        await checkInvariants(collection, recorder)
    }

    /// Hostile seed 2155: an empty answer that still claimed older messages, to a fetch
    /// from the newest end, was stored as a range at the very end of time; it became a live
    /// edge no message could reach, and after a reconnect the catch-up asked the service
    /// again and again without end.
    @Test func anEmptyPageClaimingOlderMessagesIsNotARangeAtTheEndOfTime() async throws {
        let (harness, hostile) = try await makeHarness(history: 5)
        let settle = { await harness.settle(extraEvents: { await hostile.addedEvents }) }
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        await hostile.rewriteNextPage { _ in MessagePage(messages: [], hasPrev: true, hasNext: false) }
        _ = try await collection.fetchSucceededMessages(.next)
        await settle()
        let chunks = try await harness.manager.engine.chunks(of: Harness.channel)
        #expect(!chunks.contains { $0.start == .max }, "no range at the end of time: \(chunks)")
        #expect(await harness.manager.engine.channels[Harness.channel]?.liveEdge != .max)

        for online in [false, true] {
            await harness.server.setOnline(online, for: "alice")
            await settle()
        }
        let requests = await harness.server.requestCount
        _ = try await collection.fetchSucceededMessages(.previous)
        try await harness.server.post(.text("live again"), from: "bob", to: Harness.channel)
        await settle()
        #expect(await harness.server.requestCount - requests < 20, "a bounded number of requests")
        #expect(
            await collection.succeededMessages.map(\.messageId) == (await harness.server.messages(in: Harness.channel)).map(\.messageId))
    }
}
