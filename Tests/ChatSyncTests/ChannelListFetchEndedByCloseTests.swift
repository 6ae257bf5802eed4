import ChatSyncTesting
import Testing

@testable import ChatSync

/// A channel list's `fetch()` under way when its collection is removed or the manager
/// closed: it stops and answers `true` (the end is not known), as a message collection's
/// fetch does, and the next call throws `.closed` (the list's documentation promised
/// `.closed` only, a review found).
@Suite("A channel-list fetch ended by a close", .capturingLogs)
struct ChannelListFetchEndedByCloseTests {
    @Test(arguments: [true, false])
    func aFetchUnderWayAnswersTrueAndTheNextThrows(closingTheManager: Bool) async throws {
        let harness = try await Harness.make()
        for index in 0..<6 {
            try await harness.server.createChannel("c\(index)", members: ["alice", "bob"], name: "n\(index)")
            try await harness.server.post(.text("hi \(index)"), from: "bob", to: "c\(index)")
        }
        await harness.online()
        let server = harness.server
        let list = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 3))
        await server.holdReadAnswers()
        let fetch = Task { try await list.fetch() }
        #expect(await eventually { await server.heldReadAnswerCount > 0 }, "the list's page is out")
        if closingTheManager { await harness.manager.close() } else { await list.remove() }
        await server.releaseReadAnswers()
        #expect(try await fetch.value, "the end is not known")
        let next = await errorCode { _ = try await list.fetch() }
        #expect(next == .closed, "the next call throws .closed, not \(String(describing: next))")
        await harness.manager.close()
    }
}
