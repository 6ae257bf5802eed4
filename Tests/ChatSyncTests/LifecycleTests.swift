import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

@Suite("Lifecycle", .capturingLogs)
struct LifecycleTests {
    @Test func everyThrowingCallThrowsClosedAfterClose() async throws {
        let manager = try await SyncManager(userId: "alice", service: NeverService(), databasePath: nil)
        try await manager.clearCache()
        await manager.close()
        #expect(await errorCode { try await manager.clearCache() } == .closed)
        await manager.resumeSync()  // does nothing, does not crash
        await manager.pauseSync()
        await manager.close()  // twice is fine
        #expect(await manager.connectionState == .offline)
    }

    @Test func anEmptyUserIdIsRefused() async {
        #expect(await errorCode { _ = try await SyncManager(userId: "", service: NeverService(), databasePath: nil) } == .invalidParameter)
    }

    /// An empty path names no file (SQLite would make a private temporary database, and
    /// the lock file would land in the working directory): `nil` is the cache in memory.
    @Test func anEmptyDatabasePathIsRefused() async {
        #expect(
            await errorCode { _ = try await SyncManager(userId: "alice", service: NeverService(), databasePath: "") } == .invalidParameter)
    }

    @Test func theInMemoryCacheWorksWithoutAFile() async throws {
        let manager = try await SyncManager(userId: "alice", service: NeverService(), databasePath: nil)
        #expect(manager.userId == "alice")
        try manager.engine.store.upsertMessages([makeMessage(1, at: 1)])
        #expect(try manager.engine.store.message(channelURL: "c", messageId: 1) != nil)
        await manager.close()
    }

    /// A cache file belongs to its user; anyone else's manager is refused, and so is the
    /// manager of a zoë whose id Swift's `==` takes for the owner's (a precomposed ë, and
    /// an e with a combining diaeresis): a service takes the two for two users. The owner
    /// still opens it.
    @Test(arguments: [("alice", "bob"), ("zo\u{EB}", "zoe\u{308}")])
    func userMismatchOnReopenWithAnotherUser(owner: String, other: String) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let first = try await SyncManager(userId: owner, service: NeverService(), databasePath: dir.path("db"))
        await first.close()
        #expect(
            await errorCode { _ = try await SyncManager(userId: other, service: NeverService(), databasePath: dir.path("db")) }
                == .userMismatch)
        let again = try await SyncManager(userId: owner, service: NeverService(), databasePath: dir.path("db"))
        await again.close()
    }

    /// One manager per cache file: a second one, of the same user or another, is refused
    /// while the first is open, and the first goes on working; once it closes, the file
    /// opens again with everything the first wrote. A refused or failed open does not take
    /// the file from its holder, nor keep it from the next manager.
    @Test func aCacheFileOpenInOneManagerIsRefusedToASecond() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        let first = try await SyncManager(userId: "alice", service: NeverService(), databasePath: path)
        for user in ["alice", "alice", "bob"] {
            let error = await errorCode { _ = try await SyncManager(userId: user, service: NeverService(), databasePath: path) }
            #expect(error == .databaseIO, "\(user) opened a cache another manager has open")
        }
        let sent = try await first.sendMessage(.text("still mine"), channelURL: "general")
        await first.close()
        #expect(
            await errorCode { _ = try await SyncManager(userId: "bob", service: NeverService(), databasePath: path) } == .userMismatch)
        let second = try await SyncManager(userId: "alice", service: NeverService(), databasePath: path)
        #expect(try second.engine.store.outboxEntries().map(\.reqId) == [sent.reqId])
        #expect(FileManager.default.fileExists(atPath: CacheFileLock.lockPath(forDatabaseAt: path)))
        await second.close()
    }

    /// A lock file that cannot be made (its directory is missing) is a clear `.databaseIO`,
    /// not a crash, and leaves nothing behind.
    @Test func aCacheInAMissingDirectoryIsADatabaseError() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("missing/cache.sqlite")
        #expect(await errorCode { _ = try await SyncManager(userId: "alice", service: NeverService(), databasePath: path) } == .databaseIO)
        #expect(!FileManager.default.fileExists(atPath: dir.path("missing")))
    }

    @Test func connectionStateFollowsTheService() async throws {
        let server = SimulatedChatServer()
        try await server.createChannel("general", members: ["alice"])
        let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: nil)
        #expect(await manager.connectionState == .offline, "init touches no network")
        #expect(await server.requestCount == 0)
        await manager.resumeSync()
        #expect(await eventually { await manager.connectionState == .online })
        await server.setOnline(false, for: "alice")
        #expect(await eventually { await manager.connectionState == .offline })
        await server.setOnline(true, for: "alice")
        #expect(await eventually { await manager.connectionState == .online })
        await manager.pauseSync()
        #expect(await manager.connectionState == .offline)
        await server.setOnline(false, for: "alice")
        await server.setOnline(true, for: "alice")
        for _ in 0..<100 { await Task.yield() }
        #expect(await manager.connectionState == .offline, "events after pause are not applied")
        await manager.close()
    }
}

/// Closing a manager gives back every file it opened, so an app that signs users in and
/// out (or a test that relaunches thousands of times) never runs out of descriptors.
@Suite("Lifecycle resources", .serialized, .capturingLogs)
struct LifecycleResourceTests {
    /// The number of open file descriptors of this process (Linux: /proc/self/fd), or
    /// nil where that cannot be read.
    static func openFileCount() -> Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.count
    }

    @Test func closingAManagerClosesItsFiles() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(history: 3, databasePath: dir.path("cache.sqlite"))
        await harness.online()
        try await harness.relaunch()
        await harness.online()
        guard let before = Self.openFileCount() else { return }  // no /proc here: nothing to count
        for _ in 0..<20 {
            let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
            _ = try await collection.fetchSucceededMessages(.previous)
            _ = try await harness.manager.sendMessage(.text("hi"), channelURL: Harness.channel)
            await harness.settle()
            try await harness.relaunch()
            await harness.online()
        }
        let after = try #require(Self.openFileCount())
        #expect(after - before < 5, "20 relaunches left \(after - before) more files open")
        await harness.manager.close()
    }
}
