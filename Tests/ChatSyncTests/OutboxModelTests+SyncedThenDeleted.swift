import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// Alice sends a message to a channel this device never opened, and it syncs:
    /// `message(reqId:)` answers it from the record of messages synced lately (no range of
    /// the cache holds it). The connection then breaks and alice deletes it on another
    /// device; nothing can tell this one until the channel syncs. Answers its request id,
    /// or nil when it did not sync (the step then checks nothing).
    static func syncedThenDeletedWhileAway(
        _ harness: Harness, in channelURL: String, step: Int, locked: Set<Int64>, log: inout [String]
    ) async throws -> String? {
        let server = harness.server
        await applyFaults(server, faulty: false, locked: locked)
        let message = try await harness.manager.sendMessage(.text("r\(step)"), channelURL: channelURL)
        await harness.settle()
        guard let synced = await harness.manager.message(reqId: message.reqId), synced.syncState == .synced else { return nil }
        await server.setOnline(false, for: "alice")
        await harness.settle()
        try await server.delete(messageId: synced.messageId, channelURL: channelURL)
        log.append("sent to a channel never opened, synced, deleted on another device while away")
        return message.reqId
    }

    /// Back online after ``syncedThenDeletedWhileAway(_:in:step:locked:log:)`` (and perhaps
    /// a relaunch), the app opens the channel and its first page, which lacks the message,
    /// syncs: `message(reqId:)` must no longer answer it and no list shows it. Before, the
    /// record kept it for good (the outbox model, seeds 127 and 151, rarely, under load).
    static func openedAfterDeletedWhileAway(
        _ harness: Harness, reqId: String, in channelURL: String, faulty: Bool, locked: Set<Int64>, context: String,
        log: inout [String]
    ) async throws {
        let server = harness.server
        await server.setOnline(true, for: "alice")
        await harness.settle()
        let collection = try await harness.manager.messageCollection(channelURL: channelURL)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        log.append("back online, the channel opened")
        try await expectGoneThenClose(
            harness, reqId: reqId, collection: collection, recorder: recorder, faulty: faulty, locked: locked,
            context: "\(context) \(log.suffix(4))")
    }
}
