import ChatSyncTesting
import Testing

@testable import ChatSync

/// `message(reqId:)` after a relaunch, for a message of this device that no cached range
/// holds (Guarantees: Outbox and order). Before, the messages synced lately lived in memory
/// only: a message answered just before the app was killed, whose echo had not come, was
/// in no list and unknown to `message(reqId:)` after the relaunch, as if never sent (the
/// outbox model found it, 4 of 300 seeds; the soak, once it asked after every step, in
/// 192 of 200).
@Suite("Messages synced lately, across relaunches", .capturingLogs)
struct SyncedLatelyTests {
    @Test func aMessageAnsweredBeforeItsEchoIsKnownAfterARelaunch() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        _ = try await harness.collectionAtTheNewestMessages()
        await harness.server.holdEvents(for: "alice")  // the echo waits
        let sent = try await harness.manager.sendMessage(.text("in flight"), channelURL: Harness.channel)
        await harness.settle()
        #expect(try harness.outbox().isEmpty, "answered: it left the outbox")
        #expect(await harness.manager.engine.outbox.awaitingEcho[sent.reqId] != nil)

        await harness.server.setOnline(false, for: "alice")
        await harness.server.releaseEvents(for: "alice")  // offline: the echo is lost
        try await harness.relaunch()
        let known = try #require(await harness.manager.message(reqId: sent.reqId))
        #expect(known.syncState == .synced)
        #expect(known.text == "in flight")
        #expect(known.messageId == (await harness.server.messages(in: Harness.channel).last?.messageId))
        await harness.manager.close()
    }

    @Test func aCopyNoCachedRangeHoldsFollowsChangesMadeWhileItsTokenExpired() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        _ = try await harness.collectionAtTheNewestMessages()
        let edited = try await harness.manager.sendMessage(.text("first"), channelURL: Harness.channel)
        let deleted = try await harness.manager.sendMessage(.text("gone soon"), channelURL: Harness.channel)
        await harness.settle()
        let stored = await harness.server.messages(in: Harness.channel)
        try await harness.manager.clearCache()  // no cached range holds them now
        await harness.server.setOnline(false, for: "alice")
        try await harness.relaunch()
        #expect(await harness.manager.message(reqId: edited.reqId)?.text == "first")

        // While alice is away, one is edited and one deleted, and the change logs that would
        // tell of it expire.
        _ = try await harness.server.update(messageId: stored[0].messageId, channelURL: Harness.channel, text: "from the web")
        try await harness.server.delete(messageId: stored[1].messageId, channelURL: Harness.channel)
        await harness.server.expireMessageChangeLogTokens()
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel)
        await harness.server.setOnline(true, for: "alice")
        await harness.online()
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.settle()
        try await harness.manager.clearCache()
        #expect(await harness.manager.message(reqId: edited.reqId)?.text == "from the web")
        #expect(await harness.manager.message(reqId: deleted.reqId) == nil)
        await harness.manager.close()
    }
}
