import ChatSyncTesting
import Testing

@testable import ChatSync

/// A change-log token the service refuses for good (it keeps its change logs for a
/// limited time): the cache cannot learn what changed while the app was away, so the
/// channel's cached history goes and is synced again (Guarantees: Live updates and
/// reconnect). Before, every fetch and reconnect of the channel failed on the token for
/// ever, and the cache kept serving messages deleted or edited meanwhile.
@Suite("Refused change-log tokens", .capturingLogs)
struct ChangeLogTokenTests {
    @Test func aRefusedTokenDropsTheChannelsHistoryAndViewsFillAgainWithTheTruth() async throws {
        let harness = try await Harness.make(history: 30) { $0.syncBatchSize = 10 }
        let server = harness.server
        let live = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let liveEvents = EventRecorder()
        await live.setHandler(liveEvents)
        let history = try await harness.manager.messageCollection(
            channelURL: Harness.channel, viewpoint: (await server.messages(in: Harness.channel))[5].createdAt, limit: 5)
        await harness.online()
        while await live.succeededMessages.count < 10, try await live.fetchSucceededMessages(.previous) {}
        _ = try await history.fetchSucceededMessages(.next)
        await harness.settle()
        #expect(await live.succeededMessages.count == 10)
        #expect(await history.succeededMessages.count == 5)

        // Away: others edit and delete, alice queues a message, the server's logs expire.
        await server.setOnline(false, for: "alice")
        await harness.settle()
        let before = await server.messages(in: Harness.channel)
        let (deleted, edited) = (before[27], before[28])
        try await server.delete(messageId: deleted.messageId, channelURL: Harness.channel)
        _ = try await server.update(messageId: edited.messageId, channelURL: Harness.channel, text: "edited away")
        try await server.delete(messageId: before[7].messageId, channelURL: Harness.channel)
        let queued = try await harness.manager.sendMessage(.text("queued away"), channelURL: Harness.channel)
        await server.expireMessageChangeLogTokens()
        liveEvents.reset()
        await server.setOnline(true, for: "alice")
        await harness.settle()

        #expect(await harness.manager.engine.historyResetCount == 1)
        #expect(liveEvents.events.contains { if case .succeeded(.clear, _) = $0 { true } else { false } }, "the view was cleared")
        let truth = await server.messages(in: Harness.channel)
        let shown = await live.succeededMessages
        #expect(!shown.isEmpty, "the view at the newest messages shows the newest page again")
        #expect(shown.map(\.messageId) == truth.suffix(shown.count).map(\.messageId), "exactly the server's newest messages")
        #expect(!shown.contains { $0.messageId == deleted.messageId }, "the deleted message is gone")
        #expect(shown.first { $0.messageId == edited.messageId }?.text == "edited away", "the edit is shown")
        #expect(truth.contains { $0.reqId == queued.reqId }, "the queued message was sent: the outbox is untouched")
        #expect(shown.contains { $0.reqId == queued.reqId })

        // It follows the channel again.
        try await server.post(.text("after the reset"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await live.succeededMessages.last?.text == "after the reset")

        // The view in history was cleared too; fetched again it shows the server's truth.
        #expect(await history.succeededMessages.isEmpty)
        _ = try await history.fetchSucceededMessages(.next)
        let again = await history.succeededMessages
        #expect(!again.isEmpty && !again.contains { $0.messageId == before[7].messageId })
        let start = try #require(truth.firstIndex { $0.messageId == again[0].messageId })
        #expect(again.map(\.messageId) == truth[start..<start + again.count].map(\.messageId))

        // The new token works: a later deletion reaches the view through the change logs.
        await server.setOnline(false, for: "alice")
        await harness.settle()
        let last = try #require(await live.succeededMessages.last)
        try await server.delete(messageId: last.messageId, channelURL: Harness.channel)
        await server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await harness.manager.engine.historyResetCount == 1, "no second reset")
        #expect(!(await live.succeededMessages).contains { $0.messageId == last.messageId })
        await harness.manager.close()
    }

    /// Refused for the channel (the user is no longer a member) is not a token problem:
    /// the cached history stays, and the refusal is reported as before.
    @Test func aChannelRefusalIsNotTakenForAnExpiredToken() async throws {
        let refused = ChatServiceError.permanent(.forbidden, "not a member")
        #expect(!SyncEngine.refusesTheToken(refused))
        #expect(SyncEngine.refusesTheToken(.permanent(.invalid, "expired change-log token")))
        #expect(SyncEngine.refusesTheToken(.http(status: 410, message: "gone")))
        #expect(!SyncEngine.refusesTheToken(.transient(.server, "busy")))
    }
}
