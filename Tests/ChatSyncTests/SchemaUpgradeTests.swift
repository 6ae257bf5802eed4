import ChatSyncTesting
import Foundation
import GRDB
import Testing

@testable import ChatSync

/// A cache written by the version before edits went through the outbox (schema 1: no
/// `outbox_operation` table, no `outbox.text_corrected`) opens with its queued messages
/// intact, sends them, and takes edits and deletions from then on.
@Suite("Schema upgrades", .capturingLogs)
struct SchemaUpgradeTests {
    /// Writes a cache with two messages queued offline, then rewrites it into the layout
    /// schema 1 wrote (what an app updated from that version finds on disk).
    private func makeVersion1Cache(_ harness: Harness) async throws -> [String] {
        await harness.manager.resumeSync()
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        var reqIds: [String] = []
        for text in ["queued 1", "queued 2"] {
            reqIds.append(try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel).reqId)
        }
        await harness.manager.close()
        let queue = try DatabaseQueue(path: try #require(harness.path))
        try await queue.write { db in
            try db.execute(
                sql: """
                    DROP TABLE outbox_operation;
                    ALTER TABLE outbox DROP COLUMN text_corrected;
                    ALTER TABLE outbox DROP COLUMN may_be_stored;
                    UPDATE metadata SET schema_version = 1;
                    DELETE FROM grdb_migrations WHERE identifier IN ('v2', 'v3', 'v4', 'v5');
                    DROP TABLE synced_lately;
                    DROP TABLE channel_use;
                    DROP INDEX channel_by_activity;
                    DROP INDEX channel_by_creation;
                    DROP INDEX channel_by_name;
                    """)
        }
        try queue.close()
        return reqIds
    }

    @Test func aVersion1CacheWithQueuedMessagesIsUpgradedAndSendsThem() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(history: 3, databasePath: dir.path("cache.sqlite"))
        let reqIds = try await makeVersion1Cache(harness)
        let layout = try DatabaseQueue(path: try #require(harness.path))
        #expect(try await layout.read { try $0.tableExists("outbox_operation") } == false, "the file is in the old layout")
        try layout.close()

        try await harness.reopen()
        #expect(try harness.outbox().map(\.reqId) == reqIds, "the queued messages survive the upgrade, in order")
        await harness.server.setOnline(true, for: "alice")
        await harness.online()
        let onServer = await harness.serverMessages()
        #expect(onServer.suffix(2).map(\.reqId) == reqIds, "sent once each, in order")
        #expect(try harness.outbox().isEmpty)

        // The new table works: an edit and a deletion of the upgraded cache's messages land.
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        _ = try await collection.fetchSucceededMessages(.previous)
        let mine = await collection.succeededMessages.filter { reqIds.contains($0.reqId) }
        #expect(mine.count == 2)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "edited")
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        await harness.settle()
        let after = await harness.serverMessages()
        #expect(after.first { $0.messageId == mine[0].messageId }?.text == "edited")
        #expect(!after.contains { $0.messageId == mine[1].messageId })
        // And the table of messages synced lately: both sends were remembered there, and the
        // deleted one is forgotten.
        let remembered = try harness.manager.engine.store.read { try String.fetchAll($0, sql: "SELECT req_id FROM synced_lately") }
        #expect(remembered == [mine[0].reqId])
        let version = try harness.manager.engine.store.read { try Int.fetchOne($0, sql: "SELECT schema_version FROM metadata") }
        #expect(version == StoreSchema.version)
        await harness.manager.close()
    }
}
