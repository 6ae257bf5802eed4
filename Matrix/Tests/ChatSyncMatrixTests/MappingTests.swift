import ChatSync
import Foundation
import Testing

@testable import ChatSyncMatrix

/// The parts of the adapter that need no homeserver: ids, the event mapping and errors.
@Suite("Matrix mapping")
struct MappingTests {
    static func event(_ id: String, content: JSONValue, unsigned: JSONValue? = nil, ts: Int64 = 1_000) -> MatrixEvent {
        MatrixEvent(
            eventId: id, type: "m.room.message", sender: "@bob:localhost", originServerTs: ts, roomId: "!r:localhost",
            content: content, unsigned: unsigned, redacts: nil, stateKey: nil)
    }

    @Test func derivedIdsArePositiveAndStable() {
        let id = MatrixEventIds.derivedId("$abc:localhost")
        #expect(id > 0)
        #expect(id == MatrixEventIds.derivedId("$abc:localhost"))
        #expect(id != MatrixEventIds.derivedId("$abd:localhost"))
    }

    @Test func theMapSurvivesAReopenAndNamesTheEventBack() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ids-\(UUID().uuidString).sqlite").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let id = try MatrixEventIds(path: path).id(for: "$one", roomId: "!r")
        let reopened = try MatrixEventIds(path: path)
        #expect(try reopened.event(for: id)?.eventId == "$one")
        #expect(try reopened.id(for: "$one", roomId: "!r") == id)
        #expect(try reopened.event(for: id + 1) == nil)
    }

    @Test func aTakenIdMovesToTheNextFreeOneAndIsCounted() throws {
        let ids = try MatrixEventIds(path: nil)
        // Occupy the derived id of "$b" with "$a" by hand, as a collision would.
        let wanted = MatrixEventIds.derivedId("$b")
        _ = try ids.ids(for: [("$a", "!r")])
        try ids.occupy(wanted, with: "$x")
        let assigned = try ids.id(for: "$b", roomId: "!r")
        #expect(assigned == wanted + 1)
        #expect(ids.collisionCount == 1)
        #expect(try ids.id(for: "$b", roomId: "!r") == assigned)
    }

    @Test func aTextMessageAndItsNewestEditMap() throws {
        let edit: JSONValue = .object([
            "event_id": .string("$edit"), "type": .string("m.room.message"), "sender": .string("@bob:localhost"),
            "origin_server_ts": .number(2_000),
            "content": .object([
                "msgtype": .string("m.text"), "body": .string("* fixed"),
                "m.new_content": .object(["msgtype": .string("m.text"), "body": .string("fixed")]),
                "m.relates_to": .object(["rel_type": .string("m.replace"), "event_id": .string("$one")]),
            ]),
        ])
        let event = Self.event(
            "$one", content: .object(["msgtype": .string("m.text"), "body": .string("typo")]),
            unsigned: .object(["transaction_id": .string("req-1"), "m.relations": .object(["m.replace": edit])]))
        #expect(MatrixMessageMapping.isMessage(event))
        let message = MatrixMessageMapping.message(event, roomId: "!r:localhost", ids: ["$one": 7], parentId: nil)
        #expect(message.messageId == 7)
        #expect(message.reqId == "req-1")
        #expect(message.text == "fixed")
        #expect(message.createdAt == 1_000)
        #expect(message.updatedAt == 2_000)
        #expect(message.kind == .text)
    }

    @Test func mediaCustomAndRepliesRoundTrip() {
        let request = SendMessageRequest(
            reqId: "r", channelURL: "!r", kind: .image, text: "a caption", customType: "photo", data: "{}",
            file: FileInfo(name: "p.png", mimeType: "image/png", size: 42, url: "mxc://localhost/abc"), parentMessageId: 5)
        let content = MatrixMessageMapping.content(for: request, replyTo: "$parent")
        let event = Self.event("$m", content: content)
        let message = MatrixMessageMapping.message(event, roomId: "!r", ids: [:], parentId: 5)
        #expect(message.kind == .image)
        #expect(message.text == "a caption")
        #expect(message.file == FileInfo(name: "p.png", mimeType: "image/png", size: 42, url: "mxc://localhost/abc"))
        #expect(message.customType == "photo")
        #expect(message.data == "{}")
        #expect(MatrixMessageMapping.replyTarget(event) == "$parent")

        let custom = SendMessageRequest(reqId: "c", channelURL: "!r", kind: .custom, text: "t", customType: "poll")
        let customMessage = MatrixMessageMapping.message(
            Self.event("$c", content: MatrixMessageMapping.content(for: custom, replyTo: nil)), roomId: "!r", ids: [:],
            parentId: nil)
        #expect(customMessage.kind == .custom)
        #expect(customMessage.customType == "poll")
    }

    @Test func editsRedactedAndStateEventsAreNotMessages() {
        let edit = Self.event("$e", content: MatrixMessageMapping.editContent(of: "$one", text: "x"))
        #expect(!MatrixMessageMapping.isMessage(edit))
        let redacted = Self.event("$r", content: .object([:]), unsigned: .object(["redacted_because": .object([:])]))
        #expect(!MatrixMessageMapping.isMessage(redacted))
    }

    @Test(
        arguments: [
            (429, "M_LIMIT_EXCEEDED", true, 429), (500, "M_UNKNOWN", true, 500), (502, nil, true, 502),
            (403, "M_FORBIDDEN", false, 403), (404, "M_NOT_FOUND", false, 404), (413, "M_TOO_LARGE", false, 413),
            (401, "M_UNKNOWN_TOKEN", false, 401), (400, "M_BAD_JSON", false, 400),
        ] as [(Int, String?, Bool, Int)])
    func matrixErrorsMapToTheirClass(status: Int, errcode: String?, transient: Bool, code: Int) {
        let error = MatrixErrorMapping.error(status: status, body: MatrixErrorBody(errcode: errcode, error: "x", retryAfterMs: nil))
        #expect(error.isTransient == transient)
        #expect(error.code.rawValue == code)
    }

    @Test func aRateLimitSaysHowLongToWait() {
        let body = MatrixErrorBody(errcode: "M_LIMIT_EXCEEDED", error: "slow down", retryAfterMs: 1_500)
        #expect(MatrixErrorMapping.retryAfter(body) == .milliseconds(1_500))
        #expect(MatrixErrorMapping.retryAfter(MatrixErrorBody(errcode: "M_FORBIDDEN", error: nil, retryAfterMs: nil)) == nil)
    }
}
