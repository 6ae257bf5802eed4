import Testing

@testable import ChatSync

/// The inbox between the service's stream and the engine: events come out in the order
/// they went in, in batches, and exactly one drain is scheduled at a time.
@Suite("Service event inbox")
struct ServiceEventInboxTests {
    private func ids(_ events: [ServiceEvent]) -> [Int64] {
        events.compactMap { if case .messageDeleted(_, let id) = $0 { id } else { nil } }
    }

    @Test func aLongBacklogComesOutInOrderInBoundedBatchesWithOneDrainScheduled() {
        let inbox = ServiceEventInbox()
        var scheduled = 0
        var taken: [Int64] = []
        var nextId: Int64 = 0
        // Puts and takes interleave, as the reading loop and the engine do; the backlog
        // grows past the compaction point before it empties.
        for round in 0..<60 {
            for _ in 0..<(round < 40 ? 500 : 50) {
                nextId += 1
                if inbox.put(.messageDeleted(channelURL: "c", messageId: nextId)) { scheduled += 1 }
            }
            let (batch, more) = inbox.take()
            #expect(batch.count <= ServiceEventInbox.batchLimit)
            taken += ids(batch)
            #expect(more, "the backlog is not empty in round \(round)")
        }
        var more = true
        while more {
            let next = inbox.take()
            taken += ids(next.events)
            more = next.more
        }
        #expect(taken == Array(1...nextId), "every event once, in order")
        #expect(scheduled == 1, "one drain for the whole backlog")
        #expect(inbox.put(.messageDeleted(channelURL: "c", messageId: 0)), "an emptied inbox schedules the next drain")
    }
}
