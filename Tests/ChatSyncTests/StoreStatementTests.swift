import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import ChatSync

/// Opening the store prepares the statements a first screen runs, so that the first page
/// on a new manager does not pay for preparing them (benchmark 2b).
@Suite("Store statements", .capturingLogs)
struct StoreStatementTests {
    /// The SQL of every statement prepared on the connection the engine reads with.
    private func preparedSQL(_ store: ChatStore) throws -> [String] {
        try store.read { db in
            var found: [String] = []
            var statement = sqlite3_next_stmt(db.sqliteConnection, nil)
            while let current = statement {
                if let sql = sqlite3_sql(current) { found.append(String(cString: sql)) }
                statement = sqlite3_next_stmt(db.sqliteConnection, current)
            }
            return found
        }
    }

    @Test(arguments: [false, true]) func aNewStoreHasTheFirstScreensStatementsPrepared(onFile: Bool) throws {
        let folder = try TemporaryDirectory()
        defer { folder.cleanUp() }
        let store = try ChatStore.open(path: onFile ? folder.path("cache.sqlite") : nil, userId: "alice")
        defer { store.close() }
        let before = Set(try preparedSQL(store))
        #expect(before.contains { $0.hasPrefix("SELECT start_at, start_id, end_at, end_id FROM chunk") }, "a channel's ranges")
        let pages = before.filter { $0.hasPrefix("SELECT \(MessageColumns.selectList) FROM message") }
        #expect(pages.count == 3, "the newest message, the page below a range's end and the next one back: \(pages)")

        // What a first screen then runs prepares nothing new.
        try store.upsertMessages([makeMessage(1, at: 10), makeMessage(2, at: 20)])
        let chunk = try store.addChunk(Chunk(channelURL: "c", start: .min, end: MessageKey(createdAt: 20, messageId: 2)))
        _ = try store.chunks(channelURL: "c")
        _ = try store.newestMessage(channelURL: "c")
        _ = try store.page(channelURL: "c", direction: .older, from: chunk.end, inclusive: true, bound: chunk.start, limit: 50)
        _ = try store.page(
            channelURL: "c", direction: .older, from: MessageKey(createdAt: 20, messageId: 2), inclusive: false, bound: chunk.start,
            limit: 50)
        let after = Set(try preparedSQL(store)).filter { $0.hasPrefix("SELECT") }
        #expect(after.subtracting(before).isEmpty, "prepared again: \(after.subtracting(before))")
    }
}
