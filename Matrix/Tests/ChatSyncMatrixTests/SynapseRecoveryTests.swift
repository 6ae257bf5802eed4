import ChatSync
import ChatSyncMatrix
import Foundation
import SynapseHarness
import Testing

/// What survives a relaunch, a paused sync and a homeserver crash.
extension SynapseTests {
    @Test func aRelaunchFindsTheInFlightMessageByItsTransactionId() async throws {
        try await withWorld { world in
            // The first send reaches the homeserver, but neither its answer nor its echo
            // on the live stream arrives: the app is killed while it waits, with four
            // messages queued behind it.
            let latch = Latch()
            let userId = world.alice.userId
            let holding = InterceptingService(
                world.alice,
                drops: { event in
                    if case .messageReceived(let message) = event { return message.senderId == userId }
                    return false
                },
                send: { request, base in
                    let answer = try await base.sendMessage(request)
                    if request.text == "r0" { try await latch.wait() }
                    return answer
                })
            let first = try await world.manager(holding)
            await first.resumeSync()
            var reqIds: [String] = []
            for index in 0..<5 { reqIds.append(try await first.sendMessage(.text("r\(index)"), channelURL: world.room).reqId) }
            try await waitFor("r0 on the homeserver") { try await world.roomMessages().map(\.text) == ["r0"] }
            let head = await first.message(reqId: reqIds[0])?.syncState
            #expect(head == .syncing)
            await first.close()
            latch.open()

            // The relaunch: the same device, by its saved access token, and the same cache.
            let service = try MatrixChatService(
                homeserver: world.synapse.baseURL, userId: world.alice.userId, accessToken: world.alice.accessToken,
                deviceId: world.alice.deviceId, eventIdsPath: world.eventIdsPath)
            let second = try await world.manager(service)
            await second.resumeSync()
            try await waitFor("the connection") { await second.connectionState == .online }
            let collection = try await second.messageCollection(channelURL: world.room, limit: 20)
            _ = try await collection.fetchSucceededMessages(.previous)
            try await waitFor("r0 to r4 synced, once each") {
                let texts = await collection.succeededMessages.map(\.text)
                let unsent = await collection.pendingMessages.count + collection.failedMessages.count
                return texts == (0..<5).map { "r\($0)" } && unsent == 0
            }
            #expect(try await world.roomMessages().map(\.text) == (0..<5).map { "r\($0)" })
            #expect(await collection.succeededMessages.map(\.reqId) == reqIds)
            await second.close()
        }
    }

    @Test func anEditAndARedactionWhilePausedAppearAfterResume() async throws {
        try await withWorld { world in
            var sent: [Message] = []
            for index in 0..<3 { sent.append(try await world.bobSends("t\(index)", reqId: "t\(index)")) }
            let manager = try await world.manager(world.alice)
            await manager.resumeSync()
            let collection = try await manager.messageCollection(channelURL: world.room, limit: 20)
            _ = try await collection.fetchSucceededMessages(.previous)
            #expect(await collection.succeededMessages.map(\.text) == ["t0", "t1", "t2"])
            await manager.pauseSync()

            _ = try await world.bob.updateMessage(
                channelURL: world.room, messageId: sent[0].messageId, text: "t0, edited", operationId: "bob-edit")
            try await world.bob.deleteMessage(channelURL: world.room, messageId: sent[1].messageId, operationId: "bob-redact")

            await manager.resumeSync()
            try await waitFor("the edit and the redaction") {
                await collection.succeededMessages.map(\.text) == ["t0, edited", "t2"]
            }
            await manager.close()
        }
    }

    @Test func editsAndDeletionsMadeWhilePausedLandAfterResume() async throws {
        try await withWorld { world in
            let (manager, collection) = try await aliceWithLiveView(in: world)
            var reqIds: [String] = []
            for index in 0..<3 { reqIds.append(try await manager.sendMessage(.text("a\(index)"), channelURL: world.room).reqId) }
            try await waitUntilSynced(reqIds, by: manager)
            try await waitFor("alice's messages in her view") { await collection.succeededMessages.map(\.text) == ["a0", "a1", "a2"] }
            let mine = await collection.succeededMessages
            await manager.pauseSync()

            // Made with no network work running: stored in the outbox and shown at once.
            let shown = try await manager.updateMessage(messageId: mine[0].messageId, channelURL: world.room, text: "a0, edited")
            try await manager.deleteMessage(messageId: mine[1].messageId, channelURL: world.room)
            #expect(shown.isEditPending)
            #expect(await collection.succeededMessages.map(\.text) == ["a0, edited", "a2"])

            await manager.resumeSync()
            try await waitFor("the edit to be confirmed") {
                let shown = await collection.succeededMessages
                return shown.map(\.text) == ["a0, edited", "a2"] && shown.allSatisfy { !$0.isEditPending }
            }
            // Bob's device reads the same room from the homeserver (the deletion follows the
            // edit in the lane, so it may land a moment after the edit is confirmed).
            try await waitFor("the edit and the deletion on the homeserver") {
                try await world.roomMessages().map(\.text) == ["a0, edited", "a2"]
            }
            await manager.close()
        }
    }

    @Test func aHomeserverKilledMidStreamAndRestartedLosesAndDoublesNothing() async throws {
        try await withWorld { world in
            let manager = try await world.manager(world.alice) {
                $0.sendRetryLimit = 20
                $0.sendRetryInterval = .milliseconds(500)
                $0.messageResendPolicy = .automatic
            }
            await manager.resumeSync()
            let collection = try await manager.messageCollection(channelURL: world.room, limit: 200)
            _ = try await collection.fetchSucceededMessages(.previous)
            try await waitFor("the connection") { await manager.connectionState == .online }

            // Alice's sends and bob's live messages interleave; the homeserver is killed
            // (SIGKILL) halfway and started again on the same database.
            var reqIds: [String] = []
            for index in 0..<40 {
                reqIds.append(try await manager.sendMessage(.text("a\(index)"), channelURL: world.room).reqId)
                try await world.bobSends("b\(index)", reqId: "b\(index)")
                if index == 20 {
                    world.synapse.kill()
                    try await world.synapse.restart()
                }
            }
            try await waitUntilSynced(reqIds, by: manager)
            let server = try await world.roomMessages()
            let texts = server.map(\.text)
            #expect(texts.filter { $0.hasPrefix("a") } == (0..<40).map { "a\($0)" })
            #expect(texts.filter { $0.hasPrefix("b") } == (0..<40).map { "b\($0)" })
            try await waitFor("every message in the open view") { await collection.succeededMessages.count >= server.count }
            #expect(await collection.succeededMessages.map(\.messageId) == server.map(\.messageId))
            await manager.close()
        }
    }
}
