import Foundation

@testable import ChatSync

/// A fresh directory for one test's database files, removed by `cleanUp()`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chatsync-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    func cleanUp() { try? FileManager.default.removeItem(at: url) }
}

/// A synced message with just the fields that matter to ordering.
func makeMessage(
    _ id: Int64, at createdAt: Int64, channel: String = "c", sender: String = "bob",
    kind: MessageKind = .text, customType: String = "", text: String? = nil
) -> Message {
    Message(
        messageId: id, channelURL: channel, senderId: sender, kind: kind, text: text ?? "m\(id)",
        customType: customType, createdAt: createdAt)
}

/// Runs `body` and answers the `SyncManagerError` code it threw, or `nil` if it did not throw one.
func errorCode(_ body: () async throws -> Void) async -> SyncManagerError.Code? {
    do {
        try await body()
        return nil
    } catch let error as SyncManagerError {
        return error.code
    } catch {
        return nil
    }
}

/// Runs `body` and answers the `ChatServiceError` it threw, if any.
func serviceError(_ body: () async throws -> Void) async -> ChatServiceError? {
    do {
        try await body()
        return nil
    } catch let error as ChatServiceError {
        return error
    } catch {
        return nil
    }
}

/// Lets background tasks run until `condition` holds, without any clock: a bounded
/// number of scheduler turns, so a test that waits for an event can never hang.
func eventually(turns: Int = 200_000, _ condition: () async -> Bool) async -> Bool {
    for _ in 0..<turns {
        if await condition() { return true }
        await Task.yield()
    }
    return await condition()
}
