import ChatSync
import Foundation
import Logging
import Synchronization
import Testing

@testable import ChatSyncMatrix

/// Encrypted rooms are not supported: their events are skipped, with one warning per room.
@Suite("Matrix encrypted rooms")
struct EncryptedRoomTests {
    /// The warnings logged so far.
    final class Warnings: Sendable {
        let lines = Mutex<[String]>([])
    }

    /// Keeps every warning logged through it.
    struct RecordingLogHandler: LogHandler {
        let warnings: Warnings
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            if event.level == .warning { warnings.lines.withLock { $0.append("\(event.message)") } }
        }
    }

    static func event(_ id: String, type: String, content: JSONValue) -> MatrixEvent {
        MatrixEvent(
            eventId: id, type: type, sender: "@bob:localhost", originServerTs: 1_000, roomId: "!r:localhost", content: content,
            unsigned: nil, redacts: nil, stateKey: nil)
    }

    @Test func encryptedEventsAreSkippedWithOneWarningPerRoom() throws {
        let warnings = Warnings()
        let service = try MatrixChatService(
            homeserver: "http://127.0.0.1:9", userId: "@alice:localhost", accessToken: "unused", deviceId: "DEVICE",
            eventIdsPath: nil, logger: Logger(label: "test") { _ in RecordingLogHandler(warnings: warnings) })
        let encrypted = Self.event(
            "$secret", type: "m.room.encrypted",
            content: .object(["algorithm": .string("m.megolm.v1.aes-sha2"), "ciphertext": .string("AwgA")]))
        let plain = Self.event("$plain", type: "m.room.message", content: .object(["msgtype": .string("m.text"), "body": .string("hi")]))

        let first = try service.messages(of: [encrypted, plain, encrypted], in: "!one:localhost")
        let again = try service.messages(of: [encrypted], in: "!one:localhost")
        let other = try service.messages(of: [encrypted], in: "!two:localhost")

        #expect(first.map(\.text) == ["hi"])
        #expect(again.isEmpty && other.isEmpty)
        let logged = warnings.lines.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged.allSatisfy { $0.contains("end-to-end encrypted") })
    }
}
