import ChatSyncTesting
import Testing

@testable import ChatSync

/// The edges of filling a page (`fillPage`, `serve`): where a fetch stops and what the
/// view then counts as complete. Both cases were found by a review of the loop that the
/// app's fetch and a fresh view's background fill share.
@Suite("Filling a page", .capturingLogs)
struct PageFillEdgeTests {
    /// Offline, an empty view whose viewpoint lies above the newest cached range reads
    /// that range in its place. When its filter finds nothing there, the view's next
    /// fetches must still start from its viewpoint: the messages between the range and
    /// the viewpoint are not known, and were never shown when the view counted itself
    /// complete down to the range's start.
    @Test func anEmptyOfflineReadBelowTheViewpointLeavesTheGapToFetch() async throws {
        let harness = try await Harness.make(history: 40) { $0.syncBatchSize = 3 }
        let server = harness.server
        // Cached: bob's newest messages, as one range that does not reach the start.
        try await harness.cacheNewestRangeThenGoOffline(limit: 5)
        let carol = try await postWhileOffline(harness)
        _ = try await carol.fetchSucceededMessages(.previous)
        #expect(await carol.succeededMessages.isEmpty, "offline, carol's messages are not cached")

        await server.setOnline(true, for: "alice")
        await harness.settle()
        _ = try await carol.fetchSucceededMessages(.previous)
        #expect(await carol.succeededMessages.map(\.text) == ["carol 0", "carol 1", "carol 2"])
    }

    /// The same offline read, when the cached range reaches the channel's first message:
    /// the range says nothing of what lies between its end and the viewpoint, so with
    /// nothing shown the end is unknown (API §3.1: an empty view's `.previous` is about
    /// messages at or before its viewpoint), and once online `.previous` brings carol's
    /// messages. Before, the view was marked as holding the channel's oldest, answered
    /// `false` for good, and `.next` handed out messages older than its viewpoint (an
    /// adversarial probe; the MessageCollection model's offline views find it).
    @Test func anOfflineReadOfTheWholeCacheDoesNotClaimTheEndBelowAnEmptyView() async throws {
        let harness = try await Harness.make(history: 12) { $0.syncBatchSize = 3 }
        try await harness.cacheNewestRangeThenGoOffline(limit: 5)
        let carol = try await postWhileOffline(harness)
        #expect(try await carol.fetchSucceededMessages(.previous), "offline, what lies below the viewpoint is unknown")
        #expect(await carol.succeededMessages.isEmpty)

        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        _ = try await carol.fetchSucceededMessages(.previous)
        #expect(await carol.succeededMessages.map(\.text) == ["carol 0", "carol 1", "carol 2"])
        #expect(try await !carol.fetchSucceededMessages(.previous), "nothing of carol's is older")
    }

    /// Online, a view whose viewpoint lies past the live edge reads the live chunk in its
    /// place, which is the whole story: when that chunk reaches the channel's first
    /// message and holds nothing of the view's filter, `.previous` says so. (A first
    /// version of the fix above also left this end unknown, and the view asked the
    /// service below the channel's start on every fetch; the review found it.)
    @Test func anEmptyViewPastTheLiveEdgeOnlineKnowsTheEnd() async throws {
        let harness = try await Harness.make(history: 12) { $0.syncBatchSize = 50 }
        let all = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 50)
        await harness.online()
        #expect(try await !all.fetchSucceededMessages(.previous), "the whole channel is cached")
        await harness.server.advanceClock(by: 10)
        let nobody = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: MessageFilter(senderIds: ["nobody"]), viewpoint: await harness.server.now, limit: 5)
        await harness.settle()
        let requests = await harness.server.requestCount
        #expect(try await !nobody.fetchSucceededMessages(.previous), "no message of the filter exists")
        #expect(try await !nobody.fetchSucceededMessages(.previous))
        #expect(await harness.server.requestCount == requests, "the cache answers: nothing is asked below the channel's start")
    }

    /// Carol posts three messages while alice is offline; alice then opens a view of
    /// carol's messages at a viewpoint past them all.
    private func postWhileOffline(_ harness: Harness) async throws -> MessageCollection {
        let server = harness.server
        for index in 0..<3 { try await server.post(.text("carol \(index)"), from: "carol", to: Harness.channel) }
        await server.advanceClock(by: 10)
        let viewpoint = await server.now
        return try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: MessageFilter(senderIds: ["carol"]), viewpoint: viewpoint, limit: 5)
    }

    /// A `.next` fetch that reads to the channel's newest message answers `hasMore ==
    /// false` under the shared loop's progress guard. (The review's sharper case, a last
    /// request answered by an empty page that moves no range, is guarded by counting the
    /// newest known message in the fill's position; the simulator ends a channel on its
    /// last full page, so this test does not reach that case.)
    @Test func aNextFetchEndedByAnEmptyPageSaysThereIsNoMore() async throws {
        let harness = try await Harness.make(history: 10) { $0.syncBatchSize = 3 }
        await harness.online()
        let first = try #require(await harness.server.messages(in: Harness.channel).first)
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, viewpoint: first.createdAt)
        var hasMore = true
        var fetches = 0
        while hasMore, fetches < 10 {
            hasMore = try await view.fetchSucceededMessages(.next)
            fetches += 1
        }
        #expect(!hasMore, "the channel's end was reached")
        #expect(fetches == 1, "one fetch of 50 reads the nine newer messages and finds the end")
        #expect(await view.succeededMessages.count == 9)
    }
}
