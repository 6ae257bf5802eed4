import ChatSyncTesting
import Clocks
import Testing

@testable import ChatSync

/// `clearCache()` with collections open: they empty, and they keep their place.
@Suite("Clearing the cache", .capturingLogs)
struct ClearCacheTests {
    /// A view opened in history that scrolled down to the newest messages follows them; a
    /// clear must not leave it empty and deaf to what arrives next (a chat screen at its
    /// bottom stays live), as a refused change-log token does not.
    @Test func aViewThatReachedTheNewestMessagesFollowsThemAfterAClear() async throws {
        let (harness, collection, recorder) = try await openInHistory(limit: 50)
        while try await collection.fetchSucceededMessages(.next) {}
        await harness.settle()
        #expect(await harness.manager.engine.isFollowingLive(viewId: collection.id))

        try await harness.manager.clearCache()
        let posted = try await harness.server.post(.text("after the clear"), from: "bob", to: Harness.channel)
        await harness.settle()
        let shown = await collection.succeededMessages
        #expect(shown.last?.messageId == posted.messageId, "the view follows the newest messages: \(shown.map(\.text))")
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: posted.messageId) != nil)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A view in history keeps its viewpoint: emptied by the clear, it fills again from
    /// the service where it stood when the app fetches.
    @Test func aViewInHistoryFillsAgainWhereItStood() async throws {
        let (harness, collection, recorder) = try await openInHistory(limit: 5)
        _ = try await collection.fetchSucceededMessages(.previous)
        let before = await collection.succeededMessages.map(\.messageId)

        try await harness.manager.clearCache()
        #expect(await collection.succeededMessages.isEmpty)
        _ = try await collection.fetchSucceededMessages(.previous)
        #expect(await collection.succeededMessages.map(\.messageId) == before)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// Online, the clear itself proves the channel live: in a quiet channel, where no next
    /// message would, a view at the newest messages shows them again without the app
    /// fetching (before, it stayed empty until a message came or the connection broke).
    @Test func aViewAtTheNewestMessagesShowsThemAgainInAQuietChannel() async throws {
        let (harness, collection, recorder) = try await openInHistory(limit: 5)
        while try await collection.fetchSucceededMessages(.next) {}
        await harness.settle()

        try await harness.manager.clearCache()
        await harness.settle()
        let newest = await harness.server.messages(in: Harness.channel).suffix(5).map(\.messageId)
        #expect(await collection.succeededMessages.map(\.messageId) == newest)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A view whose fetch was out when the cache was cleared is fresh only once the fetch
    /// ends. Found by the model test's clear-cache step (226 of 1,000 seeds without it).
    /// Alone in its channel, it proves the channel live then; beside a view that proved it
    /// live meanwhile, it joins the live channel (before, it stayed empty, and deaf to every
    /// later message: nothing adopts a fresh view of a channel already live).
    @Test(arguments: [false, true])
    func aViewFetchingAcrossTheClearFollowsTheNewestMessagesOnceItsFetchEnds(besideAFreshView: Bool) async throws {
        let (harness, late, collection, recorder) = try await openInHistoryHoldingAnswers(limit: 5)
        while try await collection.fetchSucceededMessages(.next) {}
        let other = besideAFreshView ? try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 5) : nil
        await harness.settle()
        await late.holdNextAnswer()
        let fetch = Task { try await collection.fetchSucceededMessages(.previous) }
        #expect(await eventually { await late.isHolding })

        try await harness.manager.clearCache()
        await harness.settle()
        #expect(await harness.manager.engine.isFollowingLive(viewId: other?.id ?? -1) == besideAFreshView)
        await late.release()
        _ = try? await fetch.value
        await harness.settle()
        let newest = await harness.server.messages(in: Harness.channel).suffix(5).map(\.messageId)
        #expect(await collection.succeededMessages.map(\.messageId) == newest, "it shows the newest page")
        let posted = try await harness.server.post(.text("after the clear"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await collection.succeededMessages.last?.messageId == posted.messageId, "and follows the channel")
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A catch-up already out when the cache is cleared keeps the channel (the clear's own
    /// cannot start beside it), and its answer, asked before the clear, is not stored. It
    /// asks again at once: before, it ended there and proved the channel live only with
    /// its retry, a backoff later (found by a reviewer's read of the clear-cache fix).
    @Test func aCatchUpOutAcrossTheClearProvesTheChannelLiveWithoutWaitingForItsRetry() async throws {
        let clock = TestClock()
        let (harness, late) = try await Harness.makeWrapped(history: 30, configure: { $0.clock = clock }) {
            LateMessageAnswers(base: $0)
        }
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 5)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        try await harness.server.post(.text("while away"), from: "bob", to: Harness.channel)
        await late.holdNextAnswer()
        await harness.server.setOnline(true, for: "alice")
        #expect(await eventually { await late.isHolding }, "the reconnect's catch-up asks for the missed messages")

        try await harness.manager.clearCache()
        await late.release()
        let newest = await harness.server.messages(in: Harness.channel).suffix(5).map(\.messageId)
        #expect(
            await eventually { await collection.succeededMessages.map(\.messageId) == newest },
            "the view shows the newest page again, the clock not advanced")
        await clock.run()
        await harness.settle()
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// Online, a collection opened at the 11th of 30 messages, with a recorder.
    private func openInHistory(limit: Int) async throws -> (Harness, MessageCollection, EventRecorder) {
        let (harness, _, collection, recorder) = try await openInHistoryHoldingAnswers(limit: limit)
        return (harness, collection, recorder)
    }

    /// As ``openInHistory(limit:)``, on a service whose next page's answer can be held.
    private func openInHistoryHoldingAnswers(
        limit: Int
    ) async throws -> (Harness, LateMessageAnswers, MessageCollection, EventRecorder) {
        let (harness, late) = try await Harness.makeWrapped(history: 30) { LateMessageAnswers(base: $0) }
        await harness.online()
        let history = await harness.server.messages(in: Harness.channel)
        let collection = try await harness.manager.messageCollection(
            channelURL: Harness.channel, viewpoint: history[10].createdAt, limit: limit)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        return (harness, late, collection, recorder)
    }
}
