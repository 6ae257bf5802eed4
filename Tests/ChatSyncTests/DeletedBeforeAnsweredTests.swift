import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// A send whose fate was unknown after a relaunch, resent after the service stored it
/// and it was deleted: the service answers the resend with the stored copy (a repeated
/// `reqId` is the same message), and no real-time echo of it ever comes. Found by the
/// soak (seed 4019): the message stayed in the failed list, awaiting an echo, for good.
@Suite("Answers naming a deleted message", .capturingLogs)
struct DeletedBeforeAnsweredTests {
    /// Kills alice's app with one text in flight, lets the server store it, and relaunches
    /// with the look-up failing, so the message ends failed as unconfirmed. Answers the
    /// relaunched harness (not resumed yet) and the message as the server stored it.
    private func storedButUnconfirmed(_ dir: TemporaryDirectory) async throws -> (Harness, Message) {
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.messageResendPolicy = .manual }
        try await harness.server.post(.text("before"), from: "bob", to: Harness.channel)
        await harness.online()
        await harness.server.holdRequests()
        let reqId = try await harness.manager.sendMessage(.text("in flight"), channelURL: Harness.channel).reqId
        let manager = harness.manager
        #expect(await eventually { (try? manager.engine.store.outboxEntry(reqId: reqId))??.message.syncState == .syncing })
        await manager.close()
        try await harness.reopen()
        await harness.server.releaseRequests()
        #expect(await eventually { await harness.server.messages(in: Harness.channel).contains { $0.reqId == reqId } })
        let stored = try #require(await harness.server.messages(in: Harness.channel).first { $0.reqId == reqId })
        return (harness, stored)
    }

    /// Fails the relaunch's look-up so that the message is failed, then heals the service.
    private func failTheLookUp(_ harness: Harness, reqId: String) async throws {
        await harness.server.setFaults(FaultPlan(failRequestRate: 1))
        await harness.manager.resumeSync()
        await harness.settle()
        #expect(try harness.outbox().first { $0.reqId == reqId }?.message.syncState == .failed)
        await harness.server.setFaults(FaultPlan())
    }

    /// Opens a collection of the channel and fetches until it is live.
    private func openLive(_ harness: Harness) async throws -> (MessageCollection, EventRecorder) {
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchFailedMessages()
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        #expect(await harness.manager.engine.channels[Harness.channel]?.liveEdge != nil, "the channel is live")
        return (collection, recorder)
    }

    @Test func aResendAnsweredWithAMessageDeletedInThisRunLeavesEveryList() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let (harness, stored) = try await storedButUnconfirmed(dir)
        try await failTheLookUp(harness, reqId: stored.reqId)
        // The user deletes the message on another device; this run sees the deletion...
        try await harness.server.delete(messageId: stored.messageId, channelURL: Harness.channel)
        await harness.settle()
        // ...opens the channel, whose newest page no longer holds it, and resends the failed copy.
        let (collection, recorder) = try await openLive(harness)
        #expect(await collection.failedMessages.map(\.reqId) == [stored.reqId])
        _ = try await harness.manager.resendMessage(reqId: stored.reqId)
        await harness.settle()

        #expect(await collection.failedMessages.isEmpty, "the resend succeeded: it leaves the failed list")
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await !collection.succeededMessages.contains { $0.messageId == stored.messageId }, "deleted: not shown")
        #expect(await harness.manager.engine.outbox.awaitingEcho.isEmpty, "no echo is awaited for a deleted message")
        #expect(try harness.outbox().isEmpty)
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: stored.messageId) == nil)
        #expect(recorder.events.contains { if case .failed(.remove, _, .removeResendSucceeded) = $0 { true } else { false } })
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    @Test func aResendAnsweredWithAMessageDeletedBeforeThisRunIsCheckedAndLeavesEveryList() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let (harness, stored) = try await storedButUnconfirmed(dir)
        // Deleted (on another device) before this run subscribed: no event tells it of that.
        try await harness.server.delete(messageId: stored.messageId, channelURL: Harness.channel)
        try await failTheLookUp(harness, reqId: stored.reqId)
        let (collection, recorder) = try await openLive(harness)
        let lookUps = await harness.server.requestCount
        _ = try await harness.manager.resendMessage(reqId: stored.reqId)
        await harness.settle()

        #expect(await harness.server.requestCount == lookUps + 2, "the resend, then one look-up")
        #expect(await collection.failedMessages.isEmpty)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await harness.manager.engine.outbox.awaitingEcho.isEmpty)
        #expect(await !collection.succeededMessages.contains { $0.messageId == stored.messageId })
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    @Test func aResendAnsweredInsideACompleteRangeAddsNoDeletedMessageToTheCache() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let (harness, stored) = try await storedButUnconfirmed(dir)
        try await harness.server.delete(messageId: stored.messageId, channelURL: Harness.channel)
        let after = try await harness.server.post(.text("after"), from: "bob", to: Harness.channel)
        try await failTheLookUp(harness, reqId: stored.reqId)
        // The newest page spans the deleted message's place: the cache holds that range as complete.
        let (collection, recorder) = try await openLive(harness)
        #expect(await collection.succeededMessages.last?.messageId == after.messageId)
        _ = try await harness.manager.resendMessage(reqId: stored.reqId)
        await harness.settle()

        #expect(await collection.failedMessages.isEmpty)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await !collection.succeededMessages.contains { $0.messageId == stored.messageId }, "deleted: not shown again")
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: stored.messageId) == nil)
        #expect(try harness.outbox().isEmpty)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// The soak's seed 805 (CI, 2026-11-24): the one look-up that checks a resent answer
    /// was lost (look-ups "half lost" after a relaunch), and nothing newer came in the
    /// channel, so the deleted message waited for its echo, in the failed list, for good.
    /// A lost check is asked again; here the first is lost and the second answers.
    @Test func aLostCheckOfAnAwaitedAnswerIsAskedAgain() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        // The relaunch's look-ups all go unanswered (so the message fails as unconfirmed),
        // and so does the first check of the resend's answer; the next one is answered.
        let unanswered = SyncEngine.syncRetryLimit + 1
        let (harness, stored, collection, recorder, lookUps) = try await resentWithoutLookUps(dir, answeringAfter: unanswered)

        #expect(lookUps.value == unanswered + 1, "the lost check was asked once more")
        #expect(await harness.manager.engine.outbox.awaitingEcho.isEmpty, "the check found it deleted: no echo is awaited")
        #expect(await collection.failedMessages.isEmpty)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await !collection.succeededMessages.contains { $0.messageId == stored.messageId })
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A service whose look-ups never answer, so that nothing but the stream can tell.
    /// (Or only its first `first` look-ups, when given.)
    private struct LookUpsUnanswered: ForwardingChatService {
        let base: any ChatService
        var first = Int.max
        let lookUps = LookUpCount()
        func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
            guard lookUps.next() > first else { throw ChatServiceError.transient(.network, "no answer") }
            return try await base.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
        }
    }

    /// Deletes the stored message before the relaunched run subscribes, runs that run on a
    /// service whose look-ups go unanswered (all of them, or the first `unanswered`), and
    /// resends the (unconfirmed) failed message: its answer is newer than the live edge,
    /// and only a look-up can check it.
    private func resentWithoutLookUps(
        _ dir: TemporaryDirectory, answeringAfter unanswered: Int = .max
    ) async throws -> (Harness, Message, MessageCollection, EventRecorder, LookUpCount) {
        var (harness, stored) = try await storedButUnconfirmed(dir)
        try await harness.server.delete(messageId: stored.messageId, channelURL: Harness.channel)
        await harness.manager.close()
        let service = LookUpsUnanswered(base: harness.server.service(for: "alice"), first: unanswered)
        harness.manager = try await SyncManager(userId: "alice", service: service, databasePath: harness.path, options: harness.options)
        await harness.manager.resumeSync()
        await harness.settle()
        #expect(try harness.outbox().first?.message.syncState == .failed, "unconfirmed: the look-ups went unanswered")
        let (collection, recorder) = try await openLive(harness)
        _ = try await harness.manager.resendMessage(reqId: stored.reqId)
        await harness.settle()
        return (harness, stored, collection, recorder, service.lookUps)
    }

    @Test func anAwaitedEchoThatALaterMessageOvertakesIsNotComing() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let (harness, stored, collection, recorder, _) = try await resentWithoutLookUps(dir)
        // The answer is newer than the live edge and cannot be checked: its echo could still come...
        #expect(await collection.failedMessages.map(\.reqId) == [stored.reqId])
        // ...until a newer message arrives first: the stream is ordered, so no echo is coming.
        let later = try await harness.server.post(.text("later"), from: "bob", to: Harness.channel)
        await harness.settle()

        #expect(await collection.failedMessages.isEmpty)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await harness.manager.engine.outbox.awaitingEcho.isEmpty)
        #expect(await collection.succeededMessages.last?.messageId == later.messageId)
        #expect(await !collection.succeededMessages.contains { $0.messageId == stored.messageId })
        // The complete range now reaching past it holds what the server holds: not the deleted message.
        let cached = try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: stored.messageId)
        #expect(cached == nil)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    @Test func aDeletionOfAMessageAwaitingItsEchoEndsTheWait() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let (harness, stored, collection, recorder, _) = try await resentWithoutLookUps(dir)
        #expect(await harness.manager.engine.outbox.awaitingEcho.keys.contains(stored.reqId))
        // The service repeats the deletion (as a change log or a second device would).
        await harness.manager.engine.applyDeleted(channelURL: Harness.channel, messageIds: [stored.messageId])

        #expect(await harness.manager.engine.outbox.awaitingEcho.isEmpty)
        #expect(await collection.failedMessages.isEmpty)
        #expect(await collection.pendingMessages.isEmpty)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A send the service stored whose answer a breaking connection lost (so it waits
    /// again, `.created`, with no retry spent), the app killed before it sent again, and
    /// the message deleted on another device meanwhile, in a channel this device never
    /// opened (no change-log token to tell of the deletion). After the relaunch the
    /// channel is proven live while the re-send is out, and the answer is the stored copy.
    /// The re-send was not taken for a repeat (the earlier attempt was noted in memory
    /// only), so the copy went unchecked and the message waited, `.syncing`, for an echo
    /// that never comes. Found by an adversarial review.
    @Test func aReSendAfterARelaunchAnsweredWithACopyDeletedSinceIsChecked() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var (harness, lost) = try await Harness.makeWrapped(
            databasePath: dir.path("cache.sqlite"), configure: { $0.messageResendPolicy = .manual },
            wrapper: { SendAnswerLostOffline(base: $0) })
        try await harness.server.post(.text("before"), from: "bob", to: Harness.channel)
        await harness.online()
        await lost.arm(goingOfflineOn: harness.server)
        let reqId = try await harness.manager.sendMessage(.text("lost answer"), channelURL: Harness.channel).reqId
        #expect(await eventually { await lost.lost == reqId })
        await harness.settle()
        var waiting = try #require(try harness.outbox().first { $0.reqId == reqId })
        #expect(waiting.message.syncState == .created && waiting.mayBeStored)
        // No retry is spent when the engine heard of the break before the lost answer; when
        // the answer came first, one is. The first is the case the earlier attempt is known
        // by `mayBeStored` alone, so the test makes it so either way.
        waiting.attempts = 0
        #expect(try harness.manager.engine.store.updateOutbox(waiting))
        await harness.manager.close()
        let stored = try #require(await harness.server.messages(in: Harness.channel).first { $0.reqId == reqId })
        try await harness.server.delete(messageId: stored.messageId, channelURL: Harness.channel)

        try await harness.reopen()
        let server = harness.server
        await server.holdWriteAnswers()
        await server.setOnline(true, for: "alice")
        await harness.manager.resumeSync()
        #expect(await eventually { await server.heldWriteAnswerCount == 1 }, "the re-send is out")
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        let engine = harness.manager.engine
        #expect(await eventually { await engine.channels[Harness.channel]?.liveEdge != nil }, "the channel is live")
        await server.releaseWriteAnswers()
        await harness.settle()

        #expect(await collection.pendingMessages.isEmpty, "the deleted message waits for no echo")
        #expect(await engine.outbox.awaitingEcho.isEmpty)
        #expect(try harness.outbox().isEmpty)
        #expect(await !collection.succeededMessages.contains { $0.reqId == reqId }, "deleted: not shown")
        #expect(await harness.manager.message(reqId: reqId) == nil, "deleted: not answered as synced")
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }
}

/// How many look-ups a service was asked, counted from any task.
private final class LookUpCount: Sendable {
    private let storage = LockedState(0)
    /// Counts one more and answers the new count.
    func next() -> Int {
        storage.withLock { count in
            count += 1
            return count
        }
    }
    var value: Int { storage.withLock { $0 } }
}
