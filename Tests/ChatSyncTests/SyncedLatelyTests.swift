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

    /// Alice's message in a channel no view showed: the service answered it, and no
    /// cached range holds it.
    private func sentToAnUnviewedChannel(_ harness: Harness) async throws -> (reqId: String, messageId: Int64) {
        try await harness.server.createChannel("quiet", members: ["alice", "bob"], name: "quiet")
        await harness.online()
        let sent = try await harness.manager.sendMessage(.text("first"), channelURL: "quiet")
        await harness.settle()
        #expect(try harness.manager.engine.store.message(reqId: sent.reqId) == nil, "not cached")
        let known = try #require(await harness.manager.message(reqId: sent.reqId))
        return (sent.reqId, known.messageId)
    }

    @Test func aCopyNoCachedRangeHoldsFollowsEditsAndDeletionsAcrossRelaunches() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        let sent = try await sentToAnUnviewedChannel(harness)
        _ = try await harness.server.update(messageId: sent.messageId, channelURL: "quiet", text: "from the web")
        await harness.settle()
        try await harness.relaunch()
        #expect(await harness.manager.message(reqId: sent.reqId)?.text == "from the web")
        await harness.online()
        try await harness.server.delete(messageId: sent.messageId, channelURL: "quiet")
        await harness.settle()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
        try await harness.relaunch()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil, "forgotten on disk too")
        await harness.manager.close()
    }

    /// More than the record holds, with deletions and edits on another device among the
    /// newest 1,500: what `message(reqId:)` answers follows the service, and a relaunch
    /// reads back exactly the messages the run remembered (before, the file kept copies
    /// the memory had let go, followed none of their changes, and answered them after a
    /// relaunch: deleted messages as synced, edited ones with their old text).
    @Test func theRecordOnDiskIsTheRecordInMemoryBeyondItsCapacity() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        try await harness.server.createChannel("quiet", members: ["alice", "bob"], name: "quiet")
        await harness.online()
        let capacity = RecentlySynced.capacity
        var sent: [String] = []
        for batch in 0..<13 {
            for index in 0..<200 {
                sent.append(try await harness.manager.sendMessage(.text("m\(batch).\(index)"), channelURL: "quiet").reqId)
            }
            await harness.settle()
        }
        let ids = Dictionary(uniqueKeysWithValues: await harness.server.messages(in: "quiet").map { ($0.reqId, $0.messageId) })
        for (offset, reqId) in sent.suffix(1_500).enumerated() {
            let messageId = try #require(ids[reqId])
            if offset % 5 == 0 {
                try await harness.server.delete(messageId: messageId, channelURL: "quiet")
            } else if offset % 7 == 0 {
                _ = try await harness.server.update(messageId: messageId, channelURL: "quiet", text: "edited")
            }
        }
        await harness.settle()
        let truth = Dictionary(uniqueKeysWithValues: await harness.server.messages(in: "quiet").map { ($0.reqId, $0.text) })
        func known(_ when: String) async -> [String] {
            var known: [String] = []
            for reqId in sent {
                guard let message = await harness.manager.message(reqId: reqId) else { continue }
                known.append(reqId)
                #expect(
                    message.text == truth[reqId],
                    "\(when): \(reqId) answered as '\(message.text)', the service has \(truth[reqId] ?? "nothing")")
            }
            return known
        }
        let before = await known("before the relaunch")
        let expected = sent.filter { truth[$0] != nil }.suffix(capacity)
        #expect(Set(before).isSubset(of: expected) && before.count >= capacity - 300, "the newest not deleted: \(before.count)")
        let rows = try harness.manager.engine.store.syncedLatelyRows()
        #expect(rows == before.count, "the file holds what memory holds: \(rows) rows for \(before.count)")
        try await harness.relaunch()
        #expect(await known("after a relaunch") == before, "the same messages after a relaunch")
        await harness.manager.close()
    }

    @Test func theRecordGoesWithTheCache() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        let sent = try await sentToAnUnviewedChannel(harness)
        try await harness.manager.clearCache()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
        try await harness.relaunch()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
        await harness.manager.close()
    }

    @Test func theRecordOfAChannelGoesWithItsRefusedToken() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        let sent = try await sentToAnUnviewedChannel(harness)
        let other = try await harness.manager.sendMessage(.text("elsewhere"), channelURL: Harness.channel)
        let view = try await harness.manager.messageCollection(channelURL: "quiet")
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.settle()
        #expect(try harness.manager.engine.store.syncToken(scope: ChatStore.messageTokenScope("quiet")) != nil)

        // Away, the service stops honouring the channel's token: its history goes, and its
        // part of the record with it (nothing says what changed there meanwhile).
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        await harness.server.expireMessageChangeLogTokens()
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await harness.manager.engine.historyResetCount == 1)
        let remembered = try harness.manager.engine.store.restoreSyncedLately().map(\.reqId)
        #expect(remembered == [other.reqId])
        #expect(await harness.manager.engine.outbox.recentlySynced[sent.reqId] == nil)
        #expect(await harness.manager.engine.outbox.recentlySynced[other.reqId] != nil)
        await harness.manager.close()
    }

    @Test func theRecordOfAChannelGoesWithTheChannel() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite"))
        let sent = try await sentToAnUnviewedChannel(harness)
        try await harness.server.deleteChannel("quiet")
        await harness.settle()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
        try await harness.relaunch()
        #expect(await harness.manager.message(reqId: sent.reqId) == nil, "gone from the file too")
        await harness.manager.close()
    }
}
