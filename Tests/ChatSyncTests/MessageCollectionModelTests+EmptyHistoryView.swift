import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// While away, a view opens in history, filtered to a custom type only this step posts
    /// (so it usually finds nothing), and fetches `.previous` from the cache. Back online,
    /// carol posts a message of that type dated at or before the viewpoint (into the span
    /// the empty fetch read, at times), and the view fetches `.next` and then `.previous`
    /// until each says nothing more is left (API §3.1): it must then show every message of
    /// that type, in order (§3.3). Then the connection goes back to how the step found it.
    ///
    /// An empty `.previous` read used to leave the view with a lower bound and no upper
    /// one, which covered nothing: the new message entered neither live nor by a fetch.
    static func emptyHistoryViewMeetsABackdatedMessage(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, online: Bool, running: Bool,
        random: inout SeededGenerator, log: inout [String], context: String
    ) async throws {
        let server = harness.server
        guard let place = await server.messages(in: Harness.channel).randomElement(using: &random) else { return }
        let filter = MessageFilter(customTypes: ["vote"])
        let collection = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: filter, viewpoint: place.createdAt, limit: Int.random(in: 1...5, using: &random))
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        log.append("away: a view of votes opened at \(place.createdAt), \(await collection.messageCount) shown")
        await rare.connectionBack(server)
        if !online { await server.setOnline(true, for: "alice") }
        if !running { await harness.manager.resumeSync() }
        await harness.settle()
        let below = await server.messages(in: Harness.channel).filter { $0.createdAt <= place.createdAt }
        if let target = below.randomElement(using: &random) {
            let at = target.createdAt - Int64.random(in: 0...1, using: &random)
            // Dated before the newest message, it is history, not news, to views at the edge.
            let newest = await server.newestKey
            for (id, watermark) in rare.following where watermark != .max { rare.following[id] = max(watermark, newest) }
            try await server.post(.custom(customType: "vote", data: ""), from: "carol", to: Harness.channel, at: at)
            log.append("  back: carol votes at \(at)")
        }
        await harness.settle()
        // Both ways to the end: the votes between the view's newest and its viewpoint are
        // `.next`'s to deliver once the view holds one.
        var hasMore = (next: true, previous: true)
        for _ in 0..<50 where hasMore.next { hasMore.next = try await collection.fetchSucceededMessages(.next) }
        for _ in 0..<50 where hasMore.previous { hasMore.previous = try await collection.fetchSucceededMessages(.previous) }
        let votes = await server.messages(in: Harness.channel).filter(filter.matches)
        let shown = await collection.succeededMessages
        let context = "\(context) \(log.suffix(6))"
        #expect(!hasMore.next && !hasMore.previous, "\(context): the view reached both ends of the channel")
        let missing = votes.filter { vote in !shown.contains { $0.messageId == vote.messageId } }
        #expect(missing.isEmpty, "\(context): votes left out: \(missing.map(\.messageId))")
        #expect(shown.map(\.messageId) == votes.map(\.messageId), "\(context): the view shows the channel's votes in order")
        await checkInvariants(collection, recorder, context: context)
        await collection.remove()
        await rare.connectionBreaks(harness, subjects)
        if !online { await server.setOnline(false, for: "alice") }
        if !running { await harness.manager.pauseSync() }
        await harness.settle()
    }
}
