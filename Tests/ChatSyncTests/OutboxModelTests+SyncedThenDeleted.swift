import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// Alice sends a message to a channel this device never opened, and it syncs:
    /// `message(reqId:)` answers it from the record of messages synced lately (no range of
    /// the cache holds it). The connection then breaks and alice deletes it on another
    /// device; nothing can tell this one until the channel syncs. With `evicted`, the app
    /// first showed the channel, so that its page cached the message, and a trim then took
    /// it: the record is again all that answers for it, and must. (That channel keeps its
    /// change-log token through the eviction, so the deletion reaches the record through the
    /// change logs when the channel is fetched again, not through its page as for a channel
    /// never opened.)
    /// Answers its request id, or nil when it did not sync (the step then checks nothing).
    static func syncedThenDeletedWhileAway(
        _ harness: Harness, in channelURL: String, evicted: Bool, step: Int, locked: Set<Int64>, context: String,
        log: inout [String]
    ) async throws -> String? {
        let server = harness.server
        await applyFaults(server, faulty: false, locked: locked)
        let message = try await harness.manager.sendMessage(.text("r\(step)"), channelURL: channelURL)
        await harness.settle()
        guard let synced = await harness.manager.message(reqId: message.reqId), synced.syncState == .synced else { return nil }
        if evicted {
            guard try await showThenEvict(harness, synced, context: context) else { return nil }
            log.append("the channel shown, then evicted")
        }
        await server.setOnline(false, for: "alice")
        await harness.settle()
        try await server.delete(messageId: synced.messageId, channelURL: channelURL)
        log.append("sent to a channel never opened, synced, deleted on another device while away")
        return message.reqId
    }

    /// Shows `message`'s channel until its page caches the message, closes it, and trims
    /// everything no view holds: closed channels entirely, and the model's own channel
    /// beyond its views' windows, which the model's checks must then survive. Answers
    /// whether the page cached the message (the step checks nothing when it did not).
    private static func showThenEvict(_ harness: Harness, _ message: Message, context: String) async throws -> Bool {
        let collection = try await harness.manager.messageCollection(channelURL: message.channelURL)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        await collection.remove()
        await harness.settle()
        let engine = harness.manager.engine
        guard try engine.store.message(channelURL: message.channelURL, messageId: message.messageId) != nil else { return false }
        await engine.trimNow(to: 0)
        let left = try engine.store.message(channelURL: message.channelURL, messageId: message.messageId)
        #expect(left == nil, "the trim evicted the closed channel: \(context)")
        #expect(await harness.manager.message(reqId: message.reqId) != nil, "evicted, still answered from the record: \(context)")
        return left == nil
    }

    /// Back online after ``syncedThenDeletedWhileAway(_:in:evicted:step:locked:context:log:)`` (and perhaps
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
