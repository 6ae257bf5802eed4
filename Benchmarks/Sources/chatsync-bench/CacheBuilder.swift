import ChatSync
import ChatSyncTesting
import Foundation

/// Writes large ChatSync caches quickly: ChatSync creates the file and its schema, then
/// rows go in through raw prepared statements. The columns mirror the library's
/// `message` and `chunk` tables (schema version 1); `sanityCheck` proves ChatSync reads
/// them back.
enum CacheBuilder {
    static let epoch: Int64 = 1_700_000_000_000
    static let columns =
        "channel_url, created_at, message_id, req_id, sender_id, kind, text, custom_type, data, updated_at"

    /// One channel of `count` messages for each name in `channels`, each channel one complete chunk.
    static func build(at path: String, channels: [String], perChannel count: Int) async throws {
        RawSQLite.removeDatabase(at: path)
        let manager = try await SyncManager(userId: "bench", service: SimulatedChatServer().service(for: "bench"), databasePath: path)
        await manager.close()
        let database = try RawSQLite(path: path)
        let insert = try database.prepare("INSERT INTO message (\(columns)) VALUES (?, ?, ?, '', ?, 'text', ?, '', '', ?)")
        let chunk = try database.prepare("INSERT INTO chunk (channel_url, start_at, start_id, end_at, end_id) VALUES (?, ?, ?, ?, ?)")
        var messageId: Int64 = 0
        for channel in channels {
            try database.exec("BEGIN")
            for index in 0..<count {
                messageId += 1
                let time = epoch + Int64(index)
                insert.bind(1, channel)
                insert.bind(2, time)
                insert.bind(3, messageId)
                insert.bind(4, index % 3 == 0 ? "bob" : "carol")
                insert.bind(5, "message \(index) of \(channel): a line of chat of a typical length")
                insert.bind(6, time)
                try insert.run()
            }
            chunk.bind(1, channel)
            chunk.bind(2, Int64.min)
            chunk.bind(3, Int64.min)
            chunk.bind(4, epoch + Int64(count - 1))
            chunk.bind(5, messageId)
            try chunk.run()
            try database.exec("COMMIT")
        }
        try database.exec("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// Opens the cache with ChatSync and checks that a page of `channel` reads back.
    static func sanityCheck(path: String, channel: String, expected: Int) async throws {
        let manager = try await SyncManager(userId: "bench", service: SimulatedChatServer().service(for: "bench"), databasePath: path)
        let collection = try await manager.messageCollection(channelURL: channel, limit: 50)
        _ = try await collection.fetchSucceededMessages(.previous)
        let count = await collection.messageCount
        await manager.close()
        guard count == min(50, expected) else { throw BenchError("the built cache reads back \(count) messages, not 50") }
    }
}
