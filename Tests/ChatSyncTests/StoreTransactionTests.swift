import Foundation
import GRDB
import Testing

@testable import ChatSync

/// `ChatStore.write` runs its own `BEGIN IMMEDIATE` … `COMMIT` (cached statements, for the
/// send path's speed) instead of GRDB's `inTransaction`: it must keep the same
/// all-or-nothing, on an in-memory cache and on a file with its reader connections.
@Suite("Store transactions", .capturingLogs)
struct StoreTransactionTests {
    private struct Refused: Error {}

    /// An in-memory cache, then a file cache (a pool whose reads use other connections).
    private static let kinds = [false, true]

    private func withStore(onFile: Bool, _ body: (ChatStore) async throws -> Void) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.cleanUp() }
        let store = try ChatStore.open(path: onFile ? folder.path("cache.sqlite") : nil, userId: "alice")
        defer { store.close() }
        try await body(store)
    }

    @Test(arguments: kinds) func aWriteThatThrowsLeavesNothingAndTheNextOneCommits(onFile: Bool) async throws {
        try await withStore(onFile: onFile) { store in
            // Any error leaves the store as a `SyncManagerError`.
            #expect(throws: SyncManagerError.self) {
                try store.write { db in
                    try ChatStore.upsertMessages([makeMessage(1, at: 10)], in: db)
                    throw Refused()
                }
            }
            #expect(try store.messageCount() == 0, "the thrown write is rolled back")
            #expect(try store.read { $0.isInsideTransaction } == false, "no transaction is left open")
            try store.upsertMessages([makeMessage(2, at: 20)])
            #expect(try store.messageCount() == 1)
        }
    }

    @Test(arguments: kinds) func aStatementThatFailsUndoesTheWholeWrite(onFile: Bool) async throws {
        try await withStore(onFile: onFile) { store in
            let first = try store.insertOutbox(OutboxEntry(message: makeOutboxMessage(reqId: "R1")))
            let code = await errorCode {
                try store.write { db in
                    try ChatStore.upsertMessages([makeMessage(1, at: 10)], in: db)
                    // The same reqId again: SQLite refuses the row (a unique index).
                    _ = try ChatStore.insertOutbox(OutboxEntry(message: first.message), in: db)
                }
            }
            #expect(code == .invalidParameter)
            #expect(try store.messageCount() == 0, "the message written before the refused row is undone")
            #expect(try store.outboxEntries(states: [.created]).map(\.reqId) == ["R1"])
            try store.upsertMessages([makeMessage(2, at: 20)])
            #expect(try store.messageCount() == 1, "the connection takes the next write")
        }
    }

    @Test func aReaderConnectionSeesAWriteOnlyOnceItIsCommitted() async throws {
        try await withStore(onFile: true) { store in
            try store.write { db in
                try ChatStore.upsertMessages([makeMessage(1, at: 10)], in: db)
                // Read on a reader connection of the pool (as the trim's census does), mid-write.
                let seen = try store.evictionCensus(exact: true).total
                #expect(seen == 0, "an uncommitted row is not visible to other connections")
            }
            #expect(try store.evictionCensus(exact: true).total == 1)
        }
    }

    @Test func aClosedStoreRefusesAWriteWithAClearError() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        store.close()
        #expect(throws: SyncManagerError.self) { try store.upsertMessages([makeMessage(1, at: 10)]) }
    }

    private func makeOutboxMessage(reqId: String) -> Message {
        Message(reqId: reqId, channelURL: "c", senderId: "alice", text: "hi", createdAt: 5, syncState: .created)
    }
}
