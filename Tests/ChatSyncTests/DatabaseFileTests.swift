import Foundation
import GRDB
import Testing

@testable import ChatSync

@Suite("Database files")
struct DatabaseFileTests {
    private func open(_ path: String, user: String = "alice") async throws -> SyncManager {
        try await SyncManager(userId: user, service: NeverService(), databasePath: path)
    }

    /// Writes a real cache with enough rows to span many pages, then closes it.
    private func makeCache(at path: String, user: String = "alice") async throws {
        let manager = try await open(path, user: user)
        try manager.engine.store.upsertMessages((1...2000).map { makeMessage($0, at: $0, text: String(repeating: "x", count: 100)) })
        await manager.close()
    }

    private func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    @Test func aFileThatIsNotADatabaseIsRefusedAndLeftAlone() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("notes.sqlite")
        let bytes = Data(String(repeating: "this is not a database\n", count: 300).utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        let code = await errorCode { _ = try await open(path) }
        #expect(code == .corruptDatabase)
        #expect(contents(path) == bytes)
    }

    @Test func aFileShorterThanAHeaderIsRefused() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("short.sqlite")
        let bytes = Data("SQLite format 3\u{0}abc".utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(await errorCode { _ = try await open(path) } == .corruptDatabase)
        #expect(contents(path) == bytes)
    }

    @Test func aDatabaseTruncatedAtAPageBoundaryIsRefusedAndLeftAlone() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        try await makeCache(at: path)
        let whole = try #require(contents(path))
        let truncated = whole.prefix(whole.count / 2 / 4096 * 4096)
        try truncated.write(to: URL(fileURLWithPath: path))
        #expect(await errorCode { _ = try await open(path) } == .corruptDatabase)
        #expect(contents(path) == truncated)
    }

    @Test func aDatabaseTruncatedMidPageIsRefused() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        try await makeCache(at: path)
        let truncated = try #require(contents(path)).prefix(10_000)
        try truncated.write(to: URL(fileURLWithPath: path))
        #expect(await errorCode { _ = try await open(path) } == .corruptDatabase)
        #expect(contents(path) == truncated)
    }

    @Test func anotherUsersCacheIsRefusedAndLeftAlone() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        try await makeCache(at: path, user: "alice")
        let before = contents(path)
        #expect(await errorCode { _ = try await open(path, user: "bob") } == .userMismatch)
        #expect(contents(path) == before)
        let again = try await open(path, user: "alice")
        #expect(try again.engine.store.countMessages(channelURL: "c", after: .min, before: .max) == 2000)
        await again.close()
    }

    @Test func aNewerSchemaIsRefusedWithAMessageThatSaysSo() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        try await makeCache(at: path)
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "UPDATE metadata SET schema_version = 99") }
        try queue.close()
        let before = contents(path)
        do {
            _ = try await open(path)
            Issue.record("opening a newer schema must throw")
        } catch let error as SyncManagerError {
            #expect(error.code == .databaseIO)
            #expect(error.message.contains("newer"))
            #expect(error.message.contains("99"))
        }
        #expect(contents(path) == before)
    }

    @Test func aForeignSQLiteDatabaseIsRefused() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("foreign.sqlite")
        let queue = try DatabaseQueue(path: path)
        try await queue.write { db in try db.execute(sql: "CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')") }
        try queue.close()
        #expect(await errorCode { _ = try await open(path) } == .corruptDatabase)
        let check = try DatabaseQueue(path: path)
        #expect(try await check.read { db in try String.fetchOne(db, sql: "SELECT name FROM recipes") } == "soup")
        try check.close()
    }

    @Test func anEmptyFileBecomesANewCacheAndReopens() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("empty.sqlite")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let manager = try await open(path)
        try manager.engine.store.upsertMessages([makeMessage(1, at: 1)])
        await manager.close()
        let reopened = try await open(path)
        #expect(try reopened.engine.store.message(channelURL: "c", messageId: 1) != nil)
        await reopened.close()
    }
}
