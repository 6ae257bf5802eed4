import Testing

@testable import ChatSync

@Suite("Chunks", .capturingLogs)
struct ChunkTests {
    private func chunk(_ start: Int64, _ end: Int64) -> Chunk {
        Chunk(
            channelURL: "c", start: MessageKey(createdAt: start, messageId: start),
            end: MessageKey(createdAt: end, messageId: end))
    }

    private func merged(_ new: Chunk, into existing: [Chunk]) -> [[Int64]] {
        Chunk.merging(new, into: existing).map { [$0.start.createdAt, $0.end.createdAt] }
    }

    @Test func disjointRangesStayApart() {
        #expect(merged(chunk(10, 20), into: [chunk(1, 5)]) == [[1, 5], [10, 20]])
        #expect(
            merged(chunk(6, 9), into: [chunk(1, 5), chunk(10, 20)]) == [[1, 5], [6, 9], [10, 20]],
            "adjacent keys are not known to be contiguous, so they do not merge")
    }

    @Test func touchingRangesMerge() {
        #expect(merged(chunk(5, 9), into: [chunk(1, 5)]) == [[1, 9]])
        #expect(merged(chunk(1, 5), into: [chunk(5, 9)]) == [[1, 9]])
    }

    @Test func touchingNeedsTheSameKeyNotJustTheSameTime() {
        let left = Chunk(channelURL: "c", start: MessageKey(createdAt: 1, messageId: 1), end: MessageKey(createdAt: 5, messageId: 3))
        let right = Chunk(channelURL: "c", start: MessageKey(createdAt: 5, messageId: 4), end: MessageKey(createdAt: 9, messageId: 9))
        #expect(Chunk.merging(right, into: [left]).count == 2, "(5,3) and (5,4) may have messages between them")
    }

    @Test func overlappingRangesMerge() {
        #expect(merged(chunk(3, 12), into: [chunk(1, 5)]) == [[1, 12]])
        #expect(merged(chunk(0, 3), into: [chunk(1, 5)]) == [[0, 5]])
    }

    @Test func containedRangesAreAbsorbed() {
        #expect(merged(chunk(2, 4), into: [chunk(1, 5)]) == [[1, 5]])
        #expect(merged(chunk(0, 10), into: [chunk(1, 5)]) == [[0, 10]])
    }

    @Test func aBridgingRangeJoinsEveryRangeItReaches() {
        #expect(merged(chunk(5, 20), into: [chunk(1, 5), chunk(8, 9), chunk(20, 30), chunk(40, 50)]) == [[1, 30], [40, 50]])
        #expect(merged(chunk(4, 21), into: [chunk(1, 5), chunk(20, 30)]) == [[1, 30]])
    }

    @Test func theStorePersistsMergesAndAnswersTheMergedRange() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        try store.addChunk(chunk(1, 5))
        try store.addChunk(chunk(20, 30))
        try store.addChunk(Chunk(channelURL: "other", start: .min, end: .max))
        #expect(try store.chunks(channelURL: "c").count == 2)
        let bridged = try store.addChunk(chunk(5, 20))
        #expect(bridged == chunk(1, 30))
        #expect(try store.chunks(channelURL: "c") == [chunk(1, 30)])
        #expect(try store.chunks(channelURL: "other").count == 1, "chunks are per channel")
        #expect(try store.chunk(channelURL: "c", containing: MessageKey(createdAt: 12, messageId: 0)) == chunk(1, 30))
        #expect(try store.chunk(channelURL: "c", containing: MessageKey(createdAt: 31, messageId: 0)) == nil)
    }

    @Test func aSyncBatchStoresMessagesAndItsRangeTogether() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        let batch = [makeMessage(1, at: 1), makeMessage(2, at: 2)]
        let removed = try store.applySyncBatch(batch, channelURL: "c", chunks: [chunk(1, 2)]).removed
        #expect(removed.isEmpty)
        #expect(try store.chunks(channelURL: "c") == [chunk(1, 2)])
        #expect(try store.page(channelURL: "c", direction: .newer, from: .min, inclusive: true, limit: 10) == batch)
    }

    @Test func aSyncBatchRemovesCachedRowsTheServerNoLongerHasInsideItsSpan() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        try store.upsertMessages([makeMessage(1, at: 1), makeMessage(2, at: 2), makeMessage(3, at: 3), makeMessage(9, at: 9)])
        let span = KeyRange(
            lower: MessageKey(createdAt: 1, messageId: 1), lowerInclusive: false,
            upper: MessageKey(createdAt: 5, messageId: 5), upperInclusive: true)
        let removed = try store.applySyncBatch(
            [makeMessage(3, at: 3), makeMessage(5, at: 5)], channelURL: "c", chunks: [chunk(1, 5)], authoritative: span
        ).removed
        #expect(removed == [2], "2 was deleted on the server; 1 is the open edge; 9 is outside")
        let ids = try store.page(channelURL: "c", direction: .newer, from: .min, inclusive: true, limit: 10).map(\.messageId)
        #expect(ids == [1, 3, 5, 9])
    }

    @Test func anOlderVersionNeverOverwritesANewerOne() throws {
        let store = try ChatStore.open(path: nil, userId: "alice")
        var edited = makeMessage(1, at: 1, text: "edited")
        edited.updatedAt = 50
        try store.upsertMessages([edited])
        try store.upsertMessages([makeMessage(1, at: 1, text: "stale")])
        #expect(try store.message(channelURL: "c", messageId: 1)?.text == "edited")
        edited.text = "edited again"
        edited.updatedAt = 60
        try store.upsertMessages([edited])
        #expect(try store.message(channelURL: "c", messageId: 1)?.text == "edited again")
    }
}
