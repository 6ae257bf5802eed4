import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Others delete the first or last message an open view shows, a trim runs (it takes
    /// what lies beyond the open windows when the cache is over its capacity), and carol
    /// posts a message dated into the span between the deleted edge and the view's next
    /// message; the view then fetches towards that edge. The view's bound is still the
    /// deleted message, so the cache must still hold that span as complete: otherwise
    /// the dated message is neither shown nor fetched, and the check after settling (the
    /// view equals the server between its ends) finds it skipped. Found: a trim's shrink
    /// started the range at the first message still cached (a read-only hunter's find).
    static func viewEdgeDeletedBeforeATrim(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, online: Bool, running: Bool,
        random: inout SeededGenerator, log: inout [String], context: String
    ) async throws {
        // The view whose edge bounds what a trim may take: the lowest lower bound, or (when
        // no view follows the newest messages) the highest upper one.
        let side: Direction = Bool.random(using: &random) ? .previous : .next
        var bounded: [(subject: ModelSubject, key: MessageKey)] = []
        for subject in subjects {
            guard let bounds = await harness.manager.engine.viewBounds(subject.collection.id) else { continue }
            if side == .next, bounds.reachedNewest { return }
            // A view with no bound on that side yet protects everything there.
            // Nor does one at the channel's first message (older side): nothing lies beyond it.
            guard let key = side == .previous ? bounds.lower : bounds.upper, key > .min, key < .max else { return }
            bounded.append((subject, key))
        }
        let outermost = side == .previous ? bounded.min { $0.key < $1.key } : bounded.max { $0.key < $1.key }
        guard let subject = outermost?.subject else { return }
        let shown = await subject.collection.succeededMessages
        guard shown.count >= 2 else { return }
        let edge = side == .previous ? shown.first! : shown.last!
        let server = harness.server
        // Offline, a view may still show a message the server deleted meanwhile.
        guard await server.messages(in: Harness.channel).contains(where: { $0.messageId == edge.messageId }) else { return }
        log.append("the \(side == .previous ? "first" : "last") shown (\(edge.messageId)) deleted, a trim, a message dated beside it")
        try await server.delete(messageId: edge.messageId, channelURL: Harness.channel)
        await harness.settle()
        // A trim as the cache's capacity would bring when over it, taking some of what
        // lies beyond the open windows (in the schedules with a capacity).
        let cached = try harness.manager.engine.store.messageCount()
        await harness.manager.engine.trimNow(to: max(cached - Int.random(in: 1...60, using: &random), 0))
        let removed = try cached - harness.manager.engine.store.messageCount()
        log.append("  the trim took \(removed)")
        // No lies: a range the cache holds as complete holds every message the service has in it.
        if online && running { try await harness.expectChunksAreTrue(Harness.channel, context: "after a trim: \(context)") }
        // Dated before the newest message, it is history, not news, to views at the edge;
        // so it is when dated before the deleted newest, which their ends may still be.
        let newest = max(await server.newestKey, edge.sortKey)
        for (id, watermark) in rare.following where watermark != .max { rare.following[id] = max(watermark, newest) }
        // After the deleted oldest (same time, larger id), or just before the deleted newest.
        let at = side == .previous ? edge.createdAt : edge.createdAt - 1
        let params: MessageParams = subject.filter.kinds?.contains(.custom) == true ? .custom(customType: "poll", data: "") : .text("dated")
        try await server.post(params, from: "carol", to: Harness.channel, at: at)
        await harness.settle()
        let hasMore = try await subject.fetchCheckingPageSize(side, context: context)
        await rare.fetched(subject, side, hasMore: hasMore, server: server, capacity: 200)
    }
}
