import ChatSyncTesting
import Testing

@testable import ChatSync

/// A channel list whose fetch ran out of cached channels away from the service answered
/// `false`: until the service's page after it comes, it holds every cached channel its
/// query matches. Also across a connection that came back and went again before that
/// page was asked (a review found the list losing a channel then).
@Suite("A channel list told it has no more while away", .capturingLogs)
struct ChannelListToldNoMoreAwayTests {
    @Test func aChannelThatMovesBelowTheLastRowAfterABlipStaysListed() async throws {
        let harness = try await Harness.make()
        let server = harness.server
        // c0 shows alice's message, newest of all; its message before is the oldest.
        for index in 0..<3 { try await server.createChannel("c\(index)", members: ["alice", "bob"], name: "n\(index)") }
        for index in 0..<3 { try await server.post(.text("bob \(index)"), from: "bob", to: "c\(index)") }
        await harness.online()
        _ = try await harness.manager.sendMessage(.text("mine"), channelURL: "c0")
        await harness.settle()
        let messages = try await harness.manager.messageCollection(channelURL: "c0")
        _ = try await messages.fetchSucceededMessages(.previous)
        await messages.remove()
        let query = ChannelListQuery(includeEmpty: false, limit: 10)
        let earlier = try await harness.manager.channelCollection(query: query)
        while try await earlier.fetch() {}
        await earlier.remove()

        await harness.manager.pauseSync()
        let list = try await harness.manager.channelCollection(query: query)
        #expect(try await list.fetch() == false, "away, the cache ran out")
        #expect(await list.channels.map(\.channelURL) == ["c0", "c2", "c1"])
        // Back, but gone again before the owed page was asked: the channel change logs
        // that come first are answered only after the pause.
        await server.holdReadAnswers()
        await harness.manager.resumeSync()
        #expect(await eventually { await server.heldReadAnswerCount > 0 }, "the reconnect's first read is out")
        await harness.manager.pauseSync()
        await server.releaseReadAnswers()
        await harness.settle()
        let mine = try #require(await list.channels.first?.lastMessage)
        try await harness.manager.deleteMessage(messageId: mine.messageId, channelURL: "c0")
        await harness.settle()
        #expect(await list.channels.map(\.channelURL) == ["c2", "c1", "c0"], "moved below the last row, still listed")
        await harness.manager.close()
    }
}
