import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// The server forgets every change-log token (it keeps its change logs for a limited
    /// time) while alice is away and others edit and delete; she comes back in the step's
    /// connection state. Her cache cannot learn what changed from the logs: the next
    /// reconnect has to recover without them.
    static func tokensExpireWhileAway(
        _ harness: Harness, online: Bool, running: Bool, random: inout SeededGenerator, log: inout [String]
    ) async throws {
        let server = harness.server
        log.append("change-log tokens expire while alice is away")
        if online { await server.setOnline(false, for: "alice") } else if running { await harness.manager.pauseSync() }
        await harness.settle()
        try await RarePaths.othersEditAndDelete(server, text: "expired edit", random: &random, log: &log)
        await server.expireMessageChangeLogTokens()
        if online { await server.setOnline(true, for: "alice") } else if running { await harness.manager.resumeSync() }
    }
}
