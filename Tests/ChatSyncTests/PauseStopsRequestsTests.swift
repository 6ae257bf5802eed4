import ChatSyncTesting
import Testing

@testable import ChatSync

/// `pauseSync()` stops network work (API §1): an answer that arrives after the pause is
/// stored, and nothing more is asked until the app resumes, however much the work it
/// belonged to had left to ask.
@Suite("A pause stops requests", .capturingLogs)
struct PauseStopsRequestsTests {
    /// Twelve channels of alice's, most with a message.
    private func channels(_ harness: Harness) async throws {
        for index in 0..<12 {
            try await harness.server.createChannel("c\(index)", members: ["alice", "bob"], name: "n\(index)")
            if index % 4 != 1 { try await harness.server.post(.text("hi \(index)"), from: "bob", to: "c\(index)") }
        }
    }

    /// A list's page answered after the pause, in the app's fetch: it used to go on with
    /// the change logs that follow a page (an adversarial review's finding). Online and
    /// settled first, so that the fetch is the only work under way: a request of other
    /// work that passed its check just before the pause would be counted after it.
    @Test func aChannelListsPageAnsweredAfterAPauseAsksNothingMore() async throws {
        let harness = try await Harness.make()
        try await channels(harness)
        await harness.online()
        let list = try await harness.manager.channelCollection(query: ChannelListQuery(limit: 2))
        let server = harness.server
        await server.holdReadAnswers()
        let fetch = Task { try await list.fetch() }
        #expect(await eventually { await server.heldReadAnswerCount == 1 }, "the list's request is out")
        await harness.manager.pauseSync()
        let requests = await server.requestCount
        await server.releaseReadAnswers()
        _ = try await fetch.value
        await harness.settle()
        #expect(await server.requestCount == requests, "nothing is asked after the pause")
        await harness.manager.resumeSync()
        await harness.settle()
        while try await list.fetch() {}
        let shown = await list.channels.map(\.channelURL)
        #expect(shown.count == 13, "resumed, the list pages to its end (with the harness's channel): \(shown)")
        await harness.manager.close()
    }
}
