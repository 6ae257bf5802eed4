import ChatSyncTesting
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

    /// Online, a collection opened at the 11th of 30 messages, with a recorder.
    private func openInHistory(limit: Int) async throws -> (Harness, MessageCollection, EventRecorder) {
        let harness = try await Harness.make(history: 30)
        await harness.online()
        let history = await harness.server.messages(in: Harness.channel)
        let collection = try await harness.manager.messageCollection(
            channelURL: Harness.channel, viewpoint: history[10].createdAt, limit: limit)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        return (harness, collection, recorder)
    }
}
