import ChatSync
import Foundation
import SynapseHarness
import Testing

@testable import ChatSyncMatrix

/// Edits and redactions sent again (after a lost response or a relaunch) carry their
/// outbox operation id as the Matrix transaction id, so the homeserver stores one event.
extension SynapseTests {
    @Test func aRepeatedEditOrRedactionIsOneEventOnTheHomeserver() async throws {
        try await withWorld { world in
            let alice = world.alice
            let first = try await alice.sendMessage(SendMessageRequest(reqId: "op-1", channelURL: world.room, kind: .text, text: "one"))
            let second = try await alice.sendMessage(SendMessageRequest(reqId: "op-2", channelURL: world.room, kind: .text, text: "two"))

            for _ in 0..<2 {
                let answer = try await alice.updateMessage(
                    channelURL: world.room, messageId: first.messageId, text: "one, edited", operationId: "edit-A")
                #expect(answer.text == "one, edited")
            }
            for _ in 0..<2 {
                try await alice.deleteMessage(channelURL: world.room, messageId: second.messageId, operationId: "redact-B")
            }

            let target = try alice.eventId(of: first.messageId, in: world.room)
            let edits = try await alice.call(
                .GET,
                "/_matrix/client/v1/rooms/\(MatrixHTTP.segment(world.room))/relations/\(MatrixHTTP.segment(target))/m.replace",
                as: MatrixMessagesPage.self)
            #expect(edits.chunk.count == 1, "one m.replace event: \(edits.chunk.map(\.eventId))")
            let recent = try await alice.call(
                .GET, alice.roomPath(world.room, "/messages"), query: [("dir", "b"), ("limit", "50")], as: MatrixMessagesPage.self)
            let redactions = recent.chunk.filter { $0.type == "m.room.redaction" }
            #expect(redactions.count == 1, "one redaction event: \(redactions.map(\.eventId))")
            // A different operation is a different transaction: a second edit is applied.
            _ = try await alice.updateMessage(channelURL: world.room, messageId: first.messageId, text: "one, again", operationId: "edit-C")
            #expect(try await world.roomMessages().map(\.text) == ["one, again"])
        }
    }
}
