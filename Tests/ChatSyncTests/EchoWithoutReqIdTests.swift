import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// A service whose real-time echoes leave the `reqId` out, and a send whose answers are
/// lost: the echo is the only sign that the service stored it. A synced message of this
/// device keeps its `reqId` and is listed once (API §3.3, §3.3a); the outbox model
/// generator walks these paths at random, these are the plainest (an adversarial
/// tester's cases).
@Suite("Echoes without reqId", .capturingLogs)
struct EchoWithoutReqIdTests {
    /// Under `.manual`, with no retry: the send fails while every answer is lost (its
    /// look-up's too), so the failed message stands beside its echo for as long as the
    /// service cannot be asked. Once it can (the next connection) the message is sent,
    /// and stays so after a relaunch.
    @Test func aFailedSendTheServiceStoredIsSentOnceItCanBeAsked() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(history: 2, databasePath: dir.path("cache.sqlite")) {
            $0.messageResendPolicy = .manual
            $0.sendRetryLimit = 0
        }
        await harness.server.setEventsCarryReqId(false)
        var (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        try await collection.fetchPendingMessages()
        try await collection.fetchFailedMessages()
        await harness.server.setFaults(FaultPlan(loseResponseRate: 1))
        let sent = try await harness.manager.sendMessage(.text("once"), channelURL: Harness.channel)
        await harness.settle()
        await harness.server.setFaults(FaultPlan())
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId).contains(sent.reqId), "stored, answers lost")
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        try await Self.expectListedOnce(sent, in: collection, "after the reconnect")
        #expect(await harness.manager.message(reqId: sent.reqId)?.syncState == .synced)
        await checkInvariants(collection, recorder)
        await collection.remove()
        try await harness.relaunch()
        (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        try await collection.fetchPendingMessages()
        try await collection.fetchFailedMessages()
        await harness.settle()
        try await Self.expectListedOnce(sent, in: collection, "after a relaunch")
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// Under `.none`: the send's retries run out while its answers are lost, but its
    /// look-up is answered: it is sent, not reported dropped.
    @Test func aSendWhoseAnswerWasLostIsNotDroppedWhenTheServiceHoldsIt() async throws {
        let (harness, _) = try await Harness.makeWrapped(history: 2) {
            $0.messageResendPolicy = .none
            $0.sendRetryLimit = 0
        } wrapper: {
            SendAnswersTimingOut(base: $0)
        }
        await harness.server.setEventsCarryReqId(false)
        let (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        try await collection.fetchPendingMessages()
        let sent = try await harness.manager.sendMessage(.text("kept"), channelURL: Harness.channel)
        await harness.settle()
        try await Self.expectListedOnce(sent, in: collection, "once settled")
        #expect(
            !recorder.events.contains {
                if case .pending(.remove, let gone) = $0 {
                    gone.contains { $0.reqId == sent.reqId && $0.syncState == .failed }
                } else {
                    false
                }
            }, "reported dropped")
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A send whose first answer was lost (the service stored it) and whose last try was
    /// refused (a 503): it is looked up before it fails. With the look-up answered it is
    /// sent at once; with every look-up lost it fails beside its echo, and after a
    /// relaunch (which forgets which answers were lost) it is asked about at the first
    /// connection and sent (the Outbox model's seeds 25 and 553 of 600 under load).
    @Test(arguments: [true, false])
    func aSendRefusedOnItsLastTryAfterALostAnswerIsSent(lookUpsAnswered: Bool) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var (harness, link) = try await Harness.makeWrapped(history: 2, databasePath: dir.path("cache.sqlite")) {
            $0.messageResendPolicy = .manual
            $0.sendRetryLimit = 1
        } wrapper: {
            LostThenRefused(base: $0, lookUpsAnswered: lookUpsAnswered)
        }
        await harness.server.setEventsCarryReqId(false)
        var (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        try await collection.fetchPendingMessages()
        try await collection.fetchFailedMessages()
        let sent = try await harness.manager.sendMessage(.text("stored"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId).contains(sent.reqId), "stored by the first try")
        #expect(await link.sends == 2, "one lost answer, one refusal")
        if lookUpsAnswered {
            try await Self.expectListedOnce(sent, in: collection, "looked up before failing")
        } else {
            #expect(await collection.failedMessages.map(\.reqId) == [sent.reqId], "failed while nothing can be asked")
            await link.answerLookUps()
            await collection.remove()
            try await harness.relaunch()
            await harness.online()
            // Before any page is read (the simulator's pages carry the reqId, and would settle it too).
            #expect(
                await harness.manager.message(reqId: sent.reqId)?.syncState == .synced, "asked about at the first connection")
            (collection, recorder) = try await harness.collectionAtTheNewestMessages()
            try await collection.fetchPendingMessages()
            try await collection.fetchFailedMessages()
            await harness.settle()
            try await Self.expectListedOnce(sent, in: collection, "after a relaunch")
        }
        #expect(await harness.manager.message(reqId: sent.reqId)?.syncState == .synced)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// A send the service stored, its answer lost as the connection broke; the app is
    /// relaunched while the message waits for its next try; back online every try is
    /// refused (a 503) until the retries are spent. The refusals stored nothing, but the
    /// earlier run's try did: it is looked up and sent, not failed beside its copy (before,
    /// a try in this run made the outbox forget the earlier run's lost answer).
    @Test func aSendStoredInAnEarlierRunAndRefusedInThisOneIsLookedUp() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var (harness, lostAnswers) = try await Harness.makeWrapped(history: 2, databasePath: dir.path("cache.sqlite")) {
            $0.messageResendPolicy = .manual
            $0.sendRetryLimit = 1
        } wrapper: {
            SendAnswerLostOffline(base: SendsRefused(base: $0))
        }
        let refusing = try #require(lostAnswers.base as? SendsRefused)
        await harness.server.setEventsCarryReqId(false)  // no echo ties the copy to the outbox
        await harness.online()
        await lostAnswers.arm(goingOfflineOn: harness.server)
        let sent = try await harness.manager.sendMessage(.text("stored"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await lostAnswers.lost == sent.reqId, "stored, its answer lost")
        #expect(try harness.outbox().map(\.message.syncState) == [.created], "waiting for its next try")
        try await harness.relaunch()
        await refusing.refuse(sent.reqId)
        await harness.server.setOnline(true, for: "alice")
        await harness.online()
        #expect(await refusing.refusals >= 1, "this run's tries were refused")
        #expect(try harness.outbox().isEmpty, "looked up and sent, not failed")
        #expect(await harness.manager.message(reqId: sent.reqId)?.syncState == .synced)
        await harness.manager.close()
    }

    /// A real-time edit of the user's message that comes without its `reqId` (the
    /// simulator leaves it out of edits too) keeps the one this device knows, in the
    /// cache and in the views. (Pages and change logs without it: the Outbox model.)
    @Test func anEditWithoutReqIdKeepsTheMessagesOwn() async throws {
        let harness = try await Harness.make(history: 2)
        await harness.server.setEventsCarryReqId(false)
        let (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        let sent = try await harness.manager.sendMessage(.text("mine"), channelURL: Harness.channel)
        await harness.settle()
        let synced = try #require(await collection.succeededMessages.first { $0.text == "mine" })
        #expect(synced.reqId == sent.reqId)
        _ = try await harness.manager.updateMessage(messageId: synced.messageId, channelURL: Harness.channel, text: "mine!")
        await harness.settle()
        let edited = await collection.succeededMessages.first { $0.messageId == synced.messageId }
        #expect(edited?.text == "mine!" && edited?.reqId == sent.reqId, "the edit kept the reqId: \(String(describing: edited))")
        let cached = try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: synced.messageId)
        #expect(cached?.reqId == sent.reqId)
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }

    /// The message is listed once, as succeeded, with its `reqId`.
    private static func expectListedOnce(_ sent: Message, in collection: MessageCollection, _ context: String) async throws {
        let succeeded = await collection.succeededMessages.filter { $0.text == sent.text }
        let pending = await collection.pendingMessages.filter { $0.reqId == sent.reqId }
        let failed = await collection.failedMessages.filter { $0.reqId == sent.reqId }
        #expect(
            succeeded.count == 1 && pending.isEmpty && failed.isEmpty,
            "\(context): \(succeeded.count) succeeded, \(pending.count) pending, \(failed.count) failed")
        #expect(succeeded.allSatisfy { $0.reqId == sent.reqId }, "\(context): the succeeded copy lost its reqId")
    }
}

/// Stores every send, then answers it with a timeout, as a link that drops answers does;
/// every other request is answered.
actor SendAnswersTimingOut: ForwardingChatService {
    nonisolated let base: any ChatService
    init(base: any ChatService) { self.base = base }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        _ = try await base.sendMessage(request)
        throw ChatServiceError.transient(.timeout, "the answer to the send did not come back")
    }
}

/// Stores the first send and loses its answer, refuses the second (a 503), answers the
/// rest; look-ups are lost until ``answerLookUps()``.
actor LostThenRefused: ForwardingChatService {
    nonisolated let base: any ChatService
    private(set) var sends = 0
    private var lookUpsAnswered: Bool
    init(base: any ChatService, lookUpsAnswered: Bool) {
        self.base = base
        self.lookUpsAnswered = lookUpsAnswered
    }

    func answerLookUps() { lookUpsAnswered = true }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        sends += 1
        switch sends {
        case 1:
            _ = try await base.sendMessage(request)
            throw ChatServiceError.transient(.timeout, "the answer to the send did not come back")
        case 2: throw ChatServiceError.transient(.unavailable, "the service is busy")
        default: return try await base.sendMessage(request)
        }
    }

    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        guard lookUpsAnswered else { throw ChatServiceError.transient(.timeout, "the look-up's answer did not come back") }
        return try await base.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
    }
}
