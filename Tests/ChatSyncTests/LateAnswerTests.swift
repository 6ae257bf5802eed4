import ChatSyncTesting
import Testing

@testable import ChatSync

/// A page the service made before a change that reached the app first, in real time:
/// the answer may not undo the change.
@Suite("Answers that arrive late", .capturingLogs)
struct LateAnswerTests {
    /// Found by the model test's late-answer step (seeds 223, 379, 790 of 1,000 without the fix).
    @Test func aPageAnsweredBeforeARealTimeDeletionDoesNotBringTheMessageBack() async throws {
        let (harness, late) = try await Harness.makeWrapped(history: 30) { LateMessageAnswers(base: $0) }
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        await late.holdNextAnswer()
        let fetch = Task { try await collection.fetchSucceededMessages(.previous) }
        #expect(await eventually { await late.isHolding })
        let newest = try #require(await harness.server.messages(in: Harness.channel).last)
        try await harness.server.delete(messageId: newest.messageId, channelURL: Harness.channel)
        await harness.settle()
        await late.release()
        _ = try await fetch.value
        await harness.settle()
        let shown = await collection.succeededMessages.map(\.messageId)
        #expect(!shown.contains(newest.messageId), "a message deleted before the page arrived is not shown")
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: newest.messageId) == nil)
        await harness.manager.close()
    }

    /// Found by the same step (seeds 39, 281, 517, 768, 861 of 1,000 without the fix).
    @Test func aPageAnsweredBeforeARealTimeEditShowsTheEdit() async throws {
        let (harness, late) = try await Harness.makeWrapped(history: 30) { LateMessageAnswers(base: $0) }
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        await late.holdNextAnswer()
        let fetch = Task { try await collection.fetchSucceededMessages(.previous) }
        #expect(await eventually { await late.isHolding })
        // The message is not cached yet: the edit has nothing to update when it arrives.
        let newest = try #require(await harness.server.messages(in: Harness.channel).last)
        try await harness.server.update(messageId: newest.messageId, channelURL: Harness.channel, text: "edited in flight")
        await harness.settle()
        await late.release()
        _ = try await fetch.value
        await harness.settle()
        let shown = await collection.succeededMessages.first { $0.messageId == newest.messageId }
        #expect(shown?.text == "edited in flight", "the view shows the edit, not the page's older copy")
        let cached = try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: newest.messageId)
        #expect(cached?.text == "edited in flight")
        await harness.manager.close()
    }
}
