import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// Alice sends a message while its echo is held, so that once answered it lives only
    /// in the pending lists; then she edits or deletes it and the service refuses that
    /// for good (the message is locked). The undo must reach the pending lists before
    /// the echo comes: it once looked only in the cache, which does not hold the message
    /// yet, so the refused edit stayed shown (or the message stayed hidden).
    /// Answers the request id sent, if any.
    static func refusedWriteWhileEchoHeld(
        _ harness: Harness, _ subjects: [ModelSubject], step: Int, random: inout SeededGenerator, log: inout [String],
        context: @autoclosure () -> String
    ) async throws -> String? {
        let server = harness.server
        let engine = harness.manager.engine
        await server.holdEvents(for: "alice")
        let draft = try await harness.manager.sendMessage(.text("w\(step)"), channelURL: Harness.channel)
        // Only an answer above the channel's live edge waits for its echo; a send that
        // fails or is placed at once leaves nothing to test.
        let answered = await eventually(turns: 20_000) { await engine.outbox.awaitingEcho[draft.reqId] != nil }
        guard answered, let awaited = await engine.outbox.awaitingEcho[draft.reqId] else {
            log.append("send w\(step) with its echo held (no echo awaited)")
            await server.releaseEvents(for: "alice")
            return draft.reqId
        }
        var plan = await server.faults
        plan.lockedMessageIds.insert(awaited.messageId)
        await server.setFaults(plan)
        let deleting = Bool.random(using: &random)
        log.append("send w\(step) with its echo held, then a refused \(deleting ? "deletion" : "edit")")
        if deleting {
            try await harness.manager.deleteMessage(messageId: awaited.messageId, channelURL: Harness.channel)
        } else {
            _ = try await harness.manager.updateMessage(messageId: awaited.messageId, channelURL: Harness.channel, text: "never \(step)")
        }
        let refused = await eventually(turns: 20_000) {
            (try? engine.store.operations().allSatisfy { $0.messageId != awaited.messageId }) == true
        }
        if refused {
            let queued = try engine.store.operations()
            for subject in subjects where subject.filter.matches(awaited) {
                let pending = await subject.collection.pendingMessages
                try OwnWrites.checkShown([], pending: pending, queued: queued, context: context())
                // A resend answered while the message was failed leaves it in the failed list until its echo.
                let failed = await subject.collection.failedMessages.filter { $0.reqId == draft.reqId }
                let shown = pending.filter { $0.reqId == draft.reqId } + failed
                #expect(
                    shown.map(\.text) == [awaited.text],
                    "a refused write of a message awaiting its echo is undone where it is shown: \(shown.map(\.text)) \(context())")
            }
        } else {
            log.append("  (the write was not settled in time: the check is skipped)")
        }
        await server.releaseEvents(for: "alice")
        return draft.reqId
    }
}
