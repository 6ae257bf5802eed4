import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// A message of this device that the service stored although its send reported failure
/// (the answer was lost) is still in the outbox; when its echo lacked the `reqId`, the
/// cache holds it without one. An edit of it then brings its `reqId` into the cache by a
/// route that is not an arrival: a real-time update, a change log, or the answer to
/// alice's own edit. Each must resolve the outbox entry, or the message shows in the
/// succeeded list and the failed list at once. Found by the simulation soak (a
/// host-sent message whose answer was lost, then edited; it showed only on some runs,
/// as the faults fall on whichever request comes first).
@Suite("Own messages resolved by updates", .capturingLogs)
struct OwnMessageResolvedByUpdateTests {
    enum Route: String, CaseIterable, Sendable {
        case realTimeUpdate, changeLog, ownEdit
    }

    @Test(arguments: Route.allCases)
    func anUpdateCarryingTheReqIdOfAFailedMessageResolvesIt(route: Route) async throws {
        let harness = try await Harness.make(history: 5) { $0.messageResendPolicy = .manual }
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)

        // The host's own SDK sends it; the server stores it, but the answer is lost.
        await harness.server.setEventsCarryReqId(false)
        let pending = Message(
            reqId: "host-1", channelURL: Harness.channel, senderId: "alice", text: "via my SDK", createdAt: 0, syncState: .syncing)
        try await collection.appendMessage(pending)
        let stored = try await harness.server.service(for: "alice").sendMessage(
            SendMessageRequest(reqId: "host-1", channelURL: Harness.channel, kind: .text, text: "via my SDK"))
        await collection.handleSendMessageResponse(pending, error: ChatServiceError.transient(.timeout, "the answer was lost"))
        await harness.settle()
        await harness.server.setEventsCarryReqId(true)
        #expect(await collection.failedMessages.map(\.reqId) == ["host-1"])
        #expect(await collection.succeededMessages.last?.messageId == stored.messageId, "its echo, without its reqId")

        switch route {
        case .realTimeUpdate:
            _ = try await harness.server.update(messageId: stored.messageId, channelURL: Harness.channel, text: "moderated")
        case .changeLog:
            await harness.server.setOnline(false, for: "alice")
            await harness.settle()
            _ = try await harness.server.update(messageId: stored.messageId, channelURL: Harness.channel, text: "moderated")
            await harness.server.setOnline(true, for: "alice")
        case .ownEdit:
            _ = try await harness.manager.updateMessage(messageId: stored.messageId, channelURL: Harness.channel, text: "moderated")
        }
        await harness.settle()

        #expect(await collection.failedMessages.isEmpty, "the service holds it: it is no longer failed")
        #expect(try harness.outbox().isEmpty)
        let shown = await collection.succeededMessages.last
        #expect(shown?.messageId == stored.messageId && shown?.text == "moderated" && shown?.reqId == "host-1")
        await checkInvariants(collection, recorder, context: route.rawValue)
        await harness.manager.close()
    }
}
