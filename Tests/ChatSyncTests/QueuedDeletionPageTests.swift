import ChatSyncTesting
import Testing

@testable import ChatSync

/// A fetch delivers `limit` messages or reaches the end of what it can reach (API.md
/// §3.1), also where the user's queued deletions hide some of the rows it reads. Before,
/// the hidden rows counted towards the page: a page of them ended the fetch with
/// `hasMore` and nothing shown. Found by a second reader probing API.md §4.6; the model
/// tests now fetch again whenever a fetch falls short (ModelSubject+PageSize.swift).
@Suite("Pages around queued deletions")
struct QueuedDeletionPageTests {
    /// Alice's messages "m0"... in a followed channel, synced; answers their ids, oldest first.
    private func sent(_ count: Int, _ harness: Harness) async throws -> [Int64] {
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel)
        await harness.online()
        _ = try await view.fetchSucceededMessages(.previous)
        for index in 0..<count { _ = try await harness.manager.sendMessage(.text("m\(index)"), channelURL: Harness.channel) }
        await harness.settle()
        await view.remove()
        return await harness.server.messages(in: Harness.channel).map(\.messageId)
    }

    private func texts(_ view: MessageCollection) async -> [String] { await view.succeededMessages.map(\.text) }

    @Test func offlineAPageOfHiddenRowsDoesNotEndTheFetch() async throws {
        let harness = try await Harness.make()
        let ids = try await sent(4, harness)
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        for id in ids.suffix(2) { try await harness.manager.deleteMessage(messageId: id, channelURL: Harness.channel) }
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 2)
        #expect(try await view.fetchSucceededMessages(.previous) == false, "the channel's start is cached")
        #expect(await texts(view) == ["m0", "m1"], "the two messages not being deleted, in one fetch")
        #expect(try harness.manager.engine.store.operations().count == 2, "the deletions wait for the connection")
    }

    @Test func onlineWithTheDeletionsInFlightTheFetchReadsOnToTheChannelsStart() async throws {
        let (harness, faults) = try await Harness.makeWrapped(wrapper: OperationFaults.init)
        let ids = try await sent(5, harness)
        await faults.hold()  // the deletions reach the service and wait there while the view fetches
        for id in ids.suffix(2) { try await harness.manager.deleteMessage(messageId: id, channelURL: Harness.channel) }
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 3)
        #expect(try await view.fetchSucceededMessages(.previous) == false, "the channel's start is known")
        #expect(await texts(view) == ["m0", "m1", "m2"])
        await faults.release()
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.text) == ["m0", "m1", "m2"])
        #expect(await texts(view) == ["m0", "m1", "m2"])
    }
}
