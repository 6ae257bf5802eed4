import Foundation
import Testing

@testable import ChatSync

/// `ChatStore.batched` groups many store calls into one commit (relaunch settles thousands
/// of outbox rows that way) without changing what each call does on its own.
@Suite("Store batches", .capturingLogs)
struct StoreBatchTests {
    private struct Refused: Error {}

    @Test func callsInABatchAreCommittedTogetherAndReadBackInside() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        let counted = try store.batched {
            try store.upsertMessages([makeMessage(1, at: 10)])
            try store.upsertMessages([makeMessage(2, at: 20)])
            return try store.messageCount()  // a read inside the batch sees its writes
        }
        #expect(counted == 2)
        #expect(try store.messageCount() == 2)
    }

    @Test func aFailingCallUndoesOnlyItselfAndItsErrorReachesTheBatch() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        var caught = false
        try store.batched {
            try store.upsertMessages([makeMessage(1, at: 10)])
            do {
                try store.write { db in
                    try ChatStore.upsertMessages([makeMessage(2, at: 20)], in: db)
                    throw Refused()
                }
            } catch {
                caught = true
            }
            try store.upsertMessages([makeMessage(3, at: 30)])
        }
        #expect(caught)
        #expect(try store.message(channelURL: "c", messageId: 1) != nil)
        #expect(try store.message(channelURL: "c", messageId: 2) == nil, "the failed call's write is undone")
        #expect(try store.message(channelURL: "c", messageId: 3) != nil)
    }

    @Test func whatTheBatchThrowsComesAfterTheRestIsCommitted() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        #expect(throws: Refused.self) {
            try store.batched {
                try store.upsertMessages([makeMessage(1, at: 10)])
                throw Refused()
            }
        }
        #expect(try store.messageCount() == 1, "each call keeps its own all-or-nothing, as without the batch")
    }

    @Test func aClosedStoreRefusesABatchWithAClearError() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        store.close()
        #expect(throws: SyncManagerError.self) { try store.batched { try store.upsertMessages([makeMessage(1, at: 10)]) } }
    }
}

/// Connections of one cache file wait for each other's locks instead of failing at once.
/// (The soak found the race: a reader connection opened while a write began. It hangs on
/// thread timing, so no seed replays it; this checks the setting that closes it.)
@Suite("Store locks", .capturingLogs)
struct StoreLockTests {
    @Test func theStoreAsksSQLiteToWaitOnALockedDatabase() throws {
        let folder = try TemporaryDirectory()
        defer { folder.cleanUp() }
        let store = try ChatStore.open(path: folder.path("cache.sqlite"), userId: "alice")
        defer { store.close() }
        let timeout = try store.read { db in try Int.fetchOne(db, sql: "PRAGMA busy_timeout") }
        #expect((timeout ?? 0) >= 1_000, "milliseconds SQLite waits for another connection's lock")
    }
}
