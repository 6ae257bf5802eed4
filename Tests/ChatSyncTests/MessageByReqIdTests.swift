import ChatSyncTesting
import Testing

@testable import ChatSync

/// `message(reqId:)` and `observeMessage(reqId:)` answer a message of this device as the
/// service last said it is, also once the cache no longer holds it (API.md §4.6: a
/// deletion removes the message everywhere, a landed edit replaces the local copy).
/// Before, their fallback for messages not in the cache (the ones synced lately) kept the
/// text each synced with: a message deleted since came back once its deletion landed,
/// and a landed edit was undone after `clearCache()`. Found by a second reader probing §4.6.
@Suite("Messages by request id")
struct MessageByReqIdTests {
    /// Alice's message "text", sent and synced in a followed channel; answers its request id and id.
    private func sentAndSynced(_ harness: Harness, text: String) async throws -> (reqId: String, messageId: Int64) {
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel)
        await harness.online()
        _ = try await view.fetchSucceededMessages(.previous)
        let sent = try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel)
        await harness.settle()
        let synced = try #require(await harness.manager.message(reqId: sent.reqId))
        #expect(synced.syncState == .synced)
        return (sent.reqId, synced.messageId)
    }

    private func observed(_ harness: Harness, _ reqId: String) async -> [Message] {
        var seen: [Message] = []
        for await message in harness.manager.observeMessage(reqId: reqId) { seen.append(message) }
        return seen
    }

    @Test func aMessageAliceDeletedIsGoneOnceTheDeletionLands() async throws {
        let harness = try await Harness.make()
        let sent = try await sentAndSynced(harness, text: "bye")
        try await harness.manager.deleteMessage(messageId: sent.messageId, channelURL: Harness.channel)
        #expect(await harness.manager.message(reqId: sent.reqId) == nil, "hidden while the deletion is queued")
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).isEmpty)
        #expect(await harness.manager.message(reqId: sent.reqId) == nil, "and once it landed")
        #expect(await observed(harness, sent.reqId).isEmpty)
    }

    @Test func aMessageSomeoneElseDeletedIsGone() async throws {
        let harness = try await Harness.make()
        let sent = try await sentAndSynced(harness, text: "bye")
        try await harness.server.delete(messageId: sent.messageId, channelURL: Harness.channel)
        await harness.settle()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
        #expect(await observed(harness, sent.reqId).isEmpty)
    }

    @Test func aLandedEditIsNeverUndoneByAClear() async throws {
        let harness = try await Harness.make()
        let sent = try await sentAndSynced(harness, text: "first")
        _ = try await harness.manager.updateMessage(messageId: sent.messageId, channelURL: Harness.channel, text: "edited")
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).first?.text == "edited")
        try await harness.manager.clearCache()
        // The record of messages synced lately goes with the cache: never the old text.
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
    }

    @Test func anEditFromAnotherDeviceIsNeverUndoneByAClear() async throws {
        let harness = try await Harness.make()
        let sent = try await sentAndSynced(harness, text: "first")
        _ = try await harness.server.update(messageId: sent.messageId, channelURL: Harness.channel, text: "from the web")
        await harness.settle()
        #expect(await harness.manager.message(reqId: sent.reqId)?.text == "from the web")
        try await harness.manager.clearCache()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
    }

    /// Alice's message in a channel no collection showed is remembered, not cached, once
    /// its echo came. Deleted on another device while this one was away (with or without
    /// a relaunch), nothing tells of it until the channel syncs: its first page, which
    /// covers the message and lacks it, must forget the copy. Before, `message(reqId:)`
    /// answered it as synced for good (the outbox model, seeds 127 and 151 under load).
    @Test(arguments: [false, true])
    func aMessageDeletedWhileAwayIsGoneOnceItsChannelSyncs(relaunched: Bool) async throws {
        var harness = try await Harness.make()
        let channelURL = "elsewhere"
        try await harness.server.createChannel(channelURL, members: ["alice", "bob"], name: channelURL)
        try await harness.server.post(.text("hi"), from: "bob", to: channelURL)
        await harness.online()
        let sent = try await harness.manager.sendMessage(.text("bye"), channelURL: channelURL)
        await harness.settle()
        let synced = try #require(await harness.manager.message(reqId: sent.reqId))
        #expect(synced.syncState == .synced)
        #expect(try harness.manager.engine.store.message(reqId: sent.reqId) == nil, "remembered, not cached")
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        try await harness.server.delete(messageId: synced.messageId, channelURL: channelURL)
        if relaunched { try await harness.relaunch() }
        await harness.server.setOnline(true, for: "alice")
        await harness.online()
        let view = try await harness.manager.messageCollection(channelURL: channelURL)
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.settle()
        #expect(await view.succeededMessages.map(\.text) == ["hi"])
        #expect(await harness.manager.message(reqId: sent.reqId) == nil, "deleted elsewhere, still answered")
        #expect(await observed(harness, sent.reqId).isEmpty)
    }
}
