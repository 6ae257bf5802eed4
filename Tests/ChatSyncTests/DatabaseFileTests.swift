import ChatSyncTesting
import Foundation
import GRDB
import Testing

@testable import ChatSync

@Suite("Database files", .capturingLogs)
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

    /// The request ids of the outbox rows SQLite can still read from a file, or nil.
    private func readableOutbox(_ path: String) -> [String]? {
        guard let queue = try? DatabaseQueue(path: path) else { return nil }
        defer { try? queue.close() }
        return try? queue.read { try String.fetchAll($0, sql: "SELECT req_id FROM outbox ORDER BY seq") }
    }

    /// Seeded damage inside a cache whose header is intact (one to six pages overwritten
    /// with noise): opening and reading either work or throw a clear `SyncManagerError`,
    /// never crash, and the outbox rows SQLite can still read are all still there after
    /// the library has opened (or refused) the file.
    @Test(arguments: 0..<24)
    func aDamagedPageGivesAClearErrorAndKeepsTheReadableOutbox(seed: UInt64) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        let manager = try await open(path)
        try manager.engine.store.upsertMessages(
            (1...2000).map { makeMessage($0, at: $0, channel: "general", text: String(repeating: "x", count: 100)) })
        var sent: [String] = []
        for index in 0..<5 { sent.append(try await manager.sendMessage(.text("keep me \(index)"), channelURL: "general").reqId) }
        await manager.close()

        var random = SeededGenerator(seed: seed)
        var bytes = [UInt8](try #require(contents(path)))
        let pageSize = 4096
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let page = Int.random(in: 1..<bytes.count / pageSize, using: &random)  // never page 0, the header
            for offset in page * pageSize..<(page + 1) * pageSize { bytes[offset] = UInt8.random(in: 0...255, using: &random) }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let readableBefore = readableOutbox(path)

        do {
            let reopened = try await open(path)
            let collection = try await reopened.messageCollection(channelURL: "general")
            do {
                try await collection.fetchPendingMessages()
                let pending = await collection.pendingMessages.map(\.reqId)
                #expect(Set(pending).isSubset(of: sent), "seed \(seed): only messages that were sent")
                _ = try await collection.fetchSucceededMessages(.previous)
                let succeeded = await collection.succeededMessages
                #expect(succeeded.map(\.sortKey) == succeeded.map(\.sortKey).sorted())
            } catch let error as SyncManagerError {
                #expect([.corruptDatabase, .databaseIO].contains(error.code), "seed \(seed): \(error)")
            }
            await reopened.close()
        } catch let error as SyncManagerError {
            #expect([.corruptDatabase, .databaseIO].contains(error.code), "seed \(seed): \(error)")
        }
        if let readableBefore {
            let after = readableOutbox(path) ?? []
            #expect(Set(readableBefore).isSubset(of: Set(after)), "seed \(seed): readable outbox rows were lost")
        }
    }
}
