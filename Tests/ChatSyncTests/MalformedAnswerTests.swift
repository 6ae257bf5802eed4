import ChatSyncTesting
import Testing

@testable import ChatSync

/// Answers that decode but describe the wrong thing, each found by the hostile-response
/// fuzzing (`HostileResponseTests`; seeds 0, 1, 6, 107 and 149 are in its CI range).
@Suite("Malformed answers")
struct MalformedAnswerTests {
    private func makeHarness(history: Int = 0) async throws -> (Harness, HostileService) {
        let server = SimulatedChatServer()
        try await server.createChannel(Harness.channel, members: ["alice", "bob"])
        for index in 0..<history { try await server.post(.text("h\(index)"), from: "bob", to: Harness.channel) }
        let hostile = HostileService(server.service(for: "alice"), seed: 1, rate: 0)
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        options.sendRetryLimit = 3
        let manager = try await SyncManager(userId: "alice", service: hostile, databasePath: nil, options: options)
        let harness = Harness(server: server, manager: manager, path: nil, options: options)
        await manager.resumeSync()
        await harness.settle()
        return (harness, hostile)
    }

    @Test(arguments: ["another channel", "no id", "another reqId"])
    func aSendAnswerDescribingAnotherMessageIsRetriedNotTrusted(_ how: String) async throws {
        let (harness, hostile) = try await makeHarness()
        await hostile.rewriteNextSend { sent in
            var bad = sent
            switch how {
            case "another channel": bad.channelURL = "elsewhere"
            case "no id": bad.messageId = -3
            default: bad.reqId = "someone-else"
            }
            return bad
        }
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let message = try await harness.manager.sendMessage(.text("hello"), channelURL: Harness.channel)
        await harness.settle(extraEvents: { await hostile.addedEvents })
        let stored = await harness.server.messages(in: Harness.channel)
        #expect(stored.map(\.reqId) == [message.reqId], "stored once: the retry got the stored message back")
        #expect(try harness.outbox().isEmpty)
        #expect(await harness.manager.message(reqId: message.reqId)?.messageId == stored.first?.messageId)
        let elsewhere = try harness.manager.engine.store.read { db in
            try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM message WHERE channel_url != ? OR message_id <= 0", arguments: [Harness.channel])
        }
        #expect(elsewhere == 0, "nothing cached from the bad answer")
        _ = try await collection.fetchSucceededMessages(.previous)
        #expect(await collection.succeededMessages.map(\.reqId) == [message.reqId])
    }

    @Test func aCopyThatMovesAMessageInTimeKeepsViewsSortedAndEditsInPlace() async throws {
        let (harness, hostile) = try await makeHarness(history: 5)
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        let settle = { await harness.settle(extraEvents: { await hostile.addedEvents }) }
        await settle()
        let original = try #require(await collection.succeededMessages.last)

        // An "edit" that moves the message to the start of time is not applied anywhere.
        var moved = original
        moved.createdAt = 1
        moved.text = "moved"
        moved.updatedAt = original.updatedAt + 1
        await hostile.inject(.messageUpdated(moved))
        await settle()
        #expect(await collection.succeededMessages.last == original)
        #expect(
            try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: original.messageId)?.createdAt
                == original.createdAt)

        // A real-time copy at another time: the list stays sorted, the message once.
        await hostile.inject(.messageReceived(moved))
        await settle()
        let succeeded = await checkInvariants(collection, recorder)
        #expect(succeeded.filter { $0.messageId == original.messageId }.count <= 1)
    }
}
