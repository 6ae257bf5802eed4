import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// A channel of alice's, new to the service, that this device has never opened: no
    /// change-log token of its own will tell of a deletion made while the app was away.
    static func newUnopenedChannel(_ harness: Harness, step: Int, named name: String = "unopened") async throws -> String {
        let channelURL = "\(name)-\(step)"
        try await harness.server.createChannel(channelURL, members: ["alice", "bob"], name: channelURL)
        try await harness.server.post(.text("hi"), from: "bob", to: channelURL)
        return channelURL
    }

    /// Alice's message `reqId` in `channelURL`, stored by the service with its answer lost
    /// as the connection broke, is deleted on another of her devices while this one is
    /// away (before the relaunch that follows).
    static func deletedElsewhere(_ harness: Harness, reqId: String, in channelURL: String, log: inout [String]) async throws {
        let server = harness.server
        guard let stored = await server.messages(in: channelURL).first(where: { $0.reqId == reqId }) else { return }
        try await server.delete(messageId: stored.messageId, channelURL: channelURL)
        log.append("deleted on another device while away")
    }

    /// Back online after ``deletedElsewhere(_:reqId:in:log:)`` and a relaunch: the re-send's
    /// answer (the copy deleted since) is held while the app opens the channel and its
    /// sync proves it live, so no deletion is left to tell when the answer names the copy.
    /// The re-send is a repeat (an earlier run's request is on file): the copy must be
    /// found deleted, so the message leaves the outbox, waits for no echo, is shown
    /// nowhere, and `message(reqId:)` no longer answers it. Before, a re-send after a
    /// relaunch was not taken for a repeat when no retry had been spent, and the message
    /// waited for an echo for ever. (A message that failed on the lost answer is resent by
    /// the app first: a look-up finds a deleted copy absent, as if never stored, so it
    /// rightly stays failed until then.)
    static func reSentAfterDeletedElsewhere(
        _ harness: Harness, reqId: String, in channelURL: String, faulty: Bool, locked: Set<Int64>, context: String,
        log: inout [String]
    ) async throws {
        let server = harness.server
        let engine = harness.manager.engine
        await applyFaults(server, faulty: false, locked: locked)
        if try harness.outbox().first(where: { $0.reqId == reqId })?.message.syncState == .failed {
            do {
                _ = try await harness.manager.resendMessage(reqId: reqId)
                log.append("resent, failed")
            } catch let error as SyncManagerError where error.code == .invalidParameter {
                log.append("resent by the policy first")  // `.automatic`: no longer failed
            }
        }
        await server.holdWriteAnswers()
        await server.setOnline(true, for: "alice")
        // The re-send goes out while the message waits to be sent (under `.none` a failure
        // dropped it instead).
        let held = await eventually {
            if await server.heldWriteAnswerCount > 0 { return true }
            return (try? harness.outbox().first { $0.reqId == reqId }) == nil
        }
        let collection = try await harness.manager.messageCollection(channelURL: channelURL)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        // Live, and the sync's passes over: none of them runs after the answer, which the
        // answer alone must get right. Bounded in turns: this only aims the step.
        let live = await eventually(turns: 50_000) {
            guard await engine.channels[channelURL]?.liveEdge != nil else { return false }
            return await engine.backgroundTaskCount <= server.heldWriteAnswerCount
        }
        log.append(
            "back online, \(held ? "a write's answer held" : "nothing to send") while the channel is opened\(live ? " and live" : "")")
        await server.releaseWriteAnswers()
        await harness.settle()
        let left = try harness.outbox().first { $0.reqId == reqId }
        #expect(
            left == nil,
            "\(reqId), deleted elsewhere, is still in the outbox (\(left.map { "\($0.message.syncState), \($0.attempts) tries" } ?? "")): \(context) \(log.suffix(4))"
        )
        #expect(
            await engine.outbox.awaitingEcho[reqId] == nil, "\(reqId), deleted elsewhere, waits for an echo: \(context) \(log.suffix(4))")
        try await expectGoneThenClose(
            harness, reqId: reqId, collection: collection, recorder: recorder, faulty: faulty, locked: locked,
            context: "\(context) \(log.suffix(4))")
    }

    /// How the deleted-elsewhere steps end: `reqId` is neither answered by
    /// `message(reqId:)` nor shown by `collection`, whose events replay to its lists; the
    /// view then closes and the schedule's faults return.
    static func expectGoneThenClose(
        _ harness: Harness, reqId: String, collection: MessageCollection, recorder: EventRecorder, faulty: Bool,
        locked: Set<Int64>, context: String
    ) async throws {
        let engine = harness.manager.engine
        // Where an answer comes from: the cache, or the record of messages synced lately.
        let cached = try engine.store.message(reqId: reqId) != nil
        let remembered = await engine.outbox.recentlySynced[reqId] != nil
        #expect(
            await harness.manager.message(reqId: reqId) == nil,
            "\(reqId), deleted elsewhere, is still answered (cached \(cached), remembered \(remembered)): \(context)")
        let shown = await collection.succeededMessages + collection.pendingMessages + collection.failedMessages
        #expect(!shown.contains { $0.reqId == reqId }, "\(reqId), deleted elsewhere, is shown: \(context)")
        await checkInvariants(collection, recorder, context: context)
        await collection.remove()
        await applyFaults(harness.server, faulty: faulty, locked: locked)
        await harness.settle()
    }
}
