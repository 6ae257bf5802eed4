import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// Alice sends a message while its echo is held, so that once answered it lives only
    /// in the views' pending (or, after a resend, failed) lists; then she edits or deletes
    /// it and the service refuses that for good (the message is locked, for the rest of
    /// the run). The undo must reach those lists before the echo comes: it once looked
    /// only in the cache, which does not hold the message yet, so the refused edit stayed
    /// shown (or the message stayed hidden). Answers the request id sent.
    static func refusedWriteWhileEchoHeld(
        _ harness: Harness, _ subjects: [ModelSubject], step: Int, faulty: Bool, locked: inout Set<Int64>,
        random: inout SeededGenerator, log: inout [String], context: @autoclosure () -> String
    ) async throws -> String {
        let server = harness.server
        let engine = harness.manager.engine
        let deleting = Bool.random(using: &random)
        // In one of three, an edit of the answered message lands first: the pending list
        // must show it as confirmed, and the refused write undo to it.
        let landsAnEditFirst = Int.random(in: 0..<3, using: &random) == 0
        await server.holdEvents(for: "alice")
        let draft = try await harness.manager.sendMessage(.text("w\(step)"), channelURL: Harness.channel)
        // Events held, settling ends once the send is answered (or failed): only an answer
        // above the channel's live edge waits for its echo, else there is nothing to test.
        await harness.settle()
        guard let awaited = await engine.outbox.awaitingEcho[draft.reqId] else {
            log.append("send w\(step) with its echo held (no echo awaited)")
            await server.releaseEvents(for: "alice")
            return draft.reqId
        }
        // A view opened now lists it too: it left the outbox and is not cached yet. (In
        // the failed list, where the others hold it, if it was answered on a resend.)
        let late = try await ModelSubject.open(harness.manager, filter: MessageFilter(), limit: 10)
        let lateLists = [await late.collection.pendingMessages, await late.collection.failedMessages]
        let listed = lateLists.joined().filter { $0.reqId == draft.reqId }.map(\.text)
        #expect(listed == [awaited.text], "a view opened while an echo is awaited lists the message: \(listed) \(context())")
        // It stays open through the refused write below, which must treat it as the others.
        let everyView = subjects + [late]
        await checkListedAlike(everyView, context: context())
        var confirmedText = awaited.text
        if landsAnEditFirst {
            _ = try await harness.manager.updateMessage(messageId: awaited.messageId, channelURL: Harness.channel, text: "landed \(step)")
            await harness.settle()
            let landed = await server.messages(in: Harness.channel).first { $0.messageId == awaited.messageId }?.text
            // Spent retries after lost answers fail the edit although the service applied it:
            // the device never learnt of it, and shows what it last confirmed.
            let reportedFailed = subjects.contains { $0.recorder.failedOperations.contains { $0.text == "landed \(step)" } }
            if landed == "landed \(step)", !reportedFailed { confirmedText = "landed \(step)" }
            let queued = try engine.store.operations()
            let awaiting = await engine.outbox.awaitingEcho
            for subject in everyView where subject.filter.matches(awaited) {
                let pending = await subject.collection.pendingMessages
                let failed = await subject.collection.failedMessages
                try OwnWrites.checkShown([], pending: pending, failed: failed, awaiting: awaiting, queued: queued, context: context())
            }
            await checkListedAlike(everyView, context: context())
        }
        locked.insert(awaited.messageId)
        await applyFaults(server, faulty: faulty, locked: locked)
        log.append(
            "send w\(step) with its echo held\(landsAnEditFirst ? ", an edit," : ""), then a refused \(deleting ? "deletion" : "edit")")
        // The answer made it the channel's preview (unless a newer message is known): the
        // undo reaches the preview too.
        let previewed = try engine.store.channel(Harness.channel)?.lastMessage?.messageId == awaited.messageId
        if deleting {
            try await harness.manager.deleteMessage(messageId: awaited.messageId, channelURL: Harness.channel)
        } else {
            _ = try await harness.manager.updateMessage(messageId: awaited.messageId, channelURL: Harness.channel, text: "never \(step)")
        }
        await harness.settle()
        let queued = try engine.store.operations()
        #expect(!queued.contains { $0.messageId == awaited.messageId }, "a locked message's write fails for good: \(context())")
        let awaiting = await engine.outbox.awaitingEcho
        for subject in everyView where subject.filter.matches(awaited) {
            let pending = await subject.collection.pendingMessages
            let failedList = await subject.collection.failedMessages
            try OwnWrites.checkShown([], pending: pending, failed: failedList, awaiting: awaiting, queued: queued, context: context())
            // A resend answered while the message was failed leaves it in the failed list
            // until its echo: the undo reaches it there too.
            let failed = failedList.filter { $0.reqId == draft.reqId }.map(\.text)
            let listed = pending.filter { $0.reqId == draft.reqId }.map(\.text)
            #expect(
                listed + failed == [confirmedText],
                "a refused write of a message awaiting its echo is undone where it is shown: \(listed) \(failed) \(context())")
        }
        await checkListedAlike(everyView, context: context())
        if previewed {
            let preview = try engine.store.channel(Harness.channel)?.lastMessage
            // What the device last confirmed, or the service's text: an edit that landed
            // while its answers were lost is one a page reaching the newest message may
            // have told since (or not, as the machine's speed has it).
            let serverText = await server.messages(in: Harness.channel).first { $0.messageId == awaited.messageId }?.text
            let undone = [confirmedText, serverText].contains(preview?.text)
            #expect(
                preview?.messageId == awaited.messageId && undone && preview?.isEditPending == false,
                "a refused write of a message awaiting its echo is undone in the channel's preview: \(String(describing: preview)) \(context())"
            )
        }
        await late.collection.remove()
        await server.releaseEvents(for: "alice")
        return draft.reqId
    }
}
