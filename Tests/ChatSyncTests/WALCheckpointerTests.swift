import Foundation
import GRDB
import Testing

@testable import ChatSync

/// The write-ahead log is folded back into the file on a connection of its own, and stays
/// bounded whatever that connection manages: commits never wait for a checkpoint, and
/// nothing written is lost to one.
@Suite("WAL checkpoints", .capturingLogs)
struct WALCheckpointerTests {
    /// Messages whose text fills about a page each, so that page counts are easy to reach.
    private func pageSizedMessages(_ range: Range<Int>) -> [Message] {
        range.map { index in
            var message = makeMessage(Int64(index), at: Int64(index))
            message.text = String(repeating: "x", count: 3_500) + "\(index)"
            return message
        }
    }

    private func walBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size]) as? Int) ?? 0
    }

    @Test func theLogIsCheckpointedInTheBackgroundAndNothingIsLost() throws {
        let folder = try TemporaryDirectory()
        defer { folder.cleanUp() }
        let path = folder.path("cache.sqlite")
        let store = try ChatStore.open(path: path, userId: "alice", walLimits: .init(backgroundPages: 100, inlinePages: 100_000))
        // 1,200 pages or so, ten messages a commit: the log passes 100 pages many times.
        for batch in 0..<120 { try store.upsertMessages(pageSizedMessages(batch * 10..<(batch + 1) * 10)) }
        let checkpoints = store.waitForCheckpoints()
        #expect(checkpoints >= 1, "the background connection checkpointed the log")
        #expect(try store.messageCount() == 1_200)
        store.close()
        // Everything is in the file itself once closed, and reads back whole.
        #expect(walBytes(path) == 0)
        let reopened = try ChatStore.open(path: path, userId: "alice")
        defer { reopened.close() }
        #expect(try reopened.messageCount() == 1_200)
        let newest = try reopened.newestMessage(channelURL: "c")
        #expect(newest?.messageId == 1_199)
        #expect(newest?.text.hasSuffix("1199") == true)
    }

    @Test func theCommitThatFindsTheLogTooLongCheckpointsItself() throws {
        let folder = try TemporaryDirectory()
        defer { folder.cleanUp() }
        let path = folder.path("cache.sqlite")
        // No background checkpoint within reach: only the writer's own keeps the log short.
        let limits = WALCheckpointer.Limits(backgroundPages: 1_000_000, inlinePages: 200)
        let store = try ChatStore.open(path: path, userId: "alice", walLimits: limits)
        defer { store.close() }
        for batch in 0..<100 { try store.upsertMessages(pageSizedMessages(batch * 10..<(batch + 1) * 10)) }
        #expect(store.waitForCheckpoints() == 0)
        // About 1,000 pages written: without a checkpoint the log would hold them all. With
        // one at 200 pages the log restarts and its file stays near 200 pages plus a commit.
        let pageSize = try store.read { try Int.fetchOne($0, sql: "PRAGMA page_size") } ?? 4_096
        #expect(walBytes(path) < 300 * (pageSize + 24) + 32, "the log's file: \(walBytes(path)) bytes")
        #expect(try store.messageCount() == 1_000)
    }

    /// A checkpoint due at every commit: the writer noting the log and the checkpoint
    /// thread starting each checkpoint share the checkpointer's state hundreds of times
    /// (the race the Thread Sanitizer reported there, a false one, came from the lock:
    /// LockedStateTests).
    @Test func commitsAndCheckpointsContendingForTheStateLoseNothing() throws {
        let folder = try TemporaryDirectory()
        defer { folder.cleanUp() }
        let path = folder.path("cache.sqlite")
        let store = try ChatStore.open(path: path, userId: "alice", walLimits: .init(backgroundPages: 1, inlinePages: 100_000))
        for index in 0..<600 { try store.upsertMessages(pageSizedMessages(index..<index + 1)) }
        #expect(store.waitForCheckpoints() >= 1, "background checkpoints ran beside the commits")
        #expect(try store.messageCount() == 600)
        store.close()
        let reopened = try ChatStore.open(path: path, userId: "alice")
        defer { reopened.close() }
        #expect(try reopened.messageCount() == 600)
    }

    @Test func anInMemoryCacheHasNoCheckpointer() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        defer { store.close() }
        try store.upsertMessages(pageSizedMessages(0..<10))
        #expect(store.waitForCheckpoints() == 0)
        #expect(try store.messageCount() == 10)
    }
}
