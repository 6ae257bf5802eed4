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

/// Lets background tasks run until `condition` holds. It gives up only after `limit` of
/// wall time without it, the last resort for a manager that really hangs (as `settle()`
/// does): a count of scheduler turns would run out sooner on a loaded machine, so a
/// test's outcome would hinge on how fast the machine is.
func eventually(within limit: Duration = .seconds(120), _ condition: () async -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: limit)
    var checks = 0
    while clock.now < deadline {
        if await condition() { return true }
        checks += 1
        // Mostly yields, so that the wait ends in the turn the condition comes true; now
        // and then a short sleep, so that a long wait does not keep a core spinning.
        if checks.isMultiple(of: 1_000) { try? await Task.sleep(for: .milliseconds(1)) } else { await Task.yield() }
    }
    return await condition()
}

/// Lets background tasks run for at most `turns` scheduler turns until `condition`
/// holds, for a test that goes on either way and only chooses its path by the answer
/// (and for a test clock's sleeps, woken by a condition that moves the clock).
func eventually(turns: Int, _ condition: () async -> Bool) async -> Bool {
    for _ in 0..<turns {
        if await condition() { return true }
        await Task.yield()
    }
    return await condition()
}
