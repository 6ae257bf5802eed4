import ChatSyncTesting
import Testing

@testable import ChatSync

/// The soak with a small cache and many channels: alice browses channels she has no
/// collection open on, so that trims evict them (and parts of the open ones) between
/// her visits, and every visit must still show each message once, with no gap, and
/// say `hasMore` honestly.
extension SoakTests {
    static let browsedChannels = (0..<6).map { "browsed\($0)" }

    /// The cache capacity of a schedule: 200 (the least allowed) in three of four.
    static func capacity(using random: inout SeededGenerator) -> Int? {
        Int.random(in: 0..<4, using: &random) == 0 ? nil : 200
    }

    /// Channels beside the three the soak keeps open, each with a history.
    func createBrowsedChannels(_ server: SimulatedChatServer, random: inout SeededGenerator) async throws {
        for channelURL in Self.browsedChannels {
            try await server.createChannel(channelURL, members: ["alice", "bob", "carol"], name: channelURL)
            for index in 0..<Int.random(in: 10...80, using: &random) {
                try await server.post(.text("b\(index)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
            }
        }
    }

    /// Opens a collection on a browsed channel, scrolls back a few pages, checks it,
    /// closes it; then checks that the cache is within its capacity.
    func browse(_ harness: Harness, random: inout SeededGenerator, state: inout SoakState, context: String) async throws {
        let channelURL = Self.browsedChannels.randomElement(using: &random)!
        for index in 0..<Int.random(in: 0...12, using: &random) {
            try await harness.server.post(.text("n\(index)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
        }
        // Not settled: their events may still be in flight while the collection opens, and
        // reach it before its handler is set (which must still see them all).
        // Half the visits glance at a browsed channel first (this one or another) and leave it
        // at once: the trim its pages set off, or its catch-up, is still running, in small
        // steps, while this visit opens and fetches, so each step must see the new view's window.
        if Bool.random(using: &random) {
            let glanced = Self.browsedChannels.randomElement(using: &random)!
            state.log.append("glance at \(glanced)")
            let glance = try await harness.manager.messageCollection(channelURL: glanced, limit: 8)
            for _ in 0..<Int.random(in: 1...6, using: &random) { _ = try await glance.fetchSucceededMessages(.previous) }
            await glance.remove()
        }
        if state.online && state.running && Int.random(in: 0..<3, using: &random) == 0 {
            try await closeMidFetch(harness, channelURL, random: &random, state: &state)
        }
        let filter = Int.random(in: 0..<4, using: &random) == 0 ? MessageFilter(senderIds: ["carol"]) : MessageFilter()
        let pages = Int.random(in: 1...12, using: &random)
        state.log.append("browse \(channelURL) \(pages) pages")
        let model = try await ModelSubject.open(harness.manager, channelURL: channelURL, filter: filter, limit: 8)
        var hasMore = true
        for _ in 0..<pages where hasMore { hasMore = try await model.collection.fetchSucceededMessages(.previous) }
        // `hasMore` speaks of the view as the last fetch left it: a change-log token refused
        // while the soak settles clears the view and refills it with the newest page, which
        // the promise does not cover (seed 758 with both cores busy).
        let oldestWhenFetched = await model.collection.succeededMessages.first?.sortKey ?? .max
        await harness.settle()
        let shown = await checkInvariants(model.collection, model.recorder, context: context)
        let store = harness.manager.engine.store
        let evicted = try shown.filter { try store.message(channelURL: channelURL, messageId: $0.messageId) == nil }
        #expect(evicted.isEmpty, "browsing \(channelURL): the open view's messages left the cache: \(evicted.map(\.messageId)) \(context)")
        let truth = await harness.server.messages(in: channelURL).filter(filter.matches)
        if state.online && state.running {
            let expected = serverRange(truth, filter, from: shown.first, to: shown.last)
            #expect(
                shown.map(\.messageId) == expected.map(\.messageId), "browsing \(channelURL): a hole or a stray after eviction: \(context)")
        }
        // `false` is a promise that nothing older exists (no browsed message is ever deleted).
        if !hasMore {
            #expect(
                !truth.contains { $0.sortKey < oldestWhenFetched }, "browsing \(channelURL): hasMore false with older messages: \(context)")
        }
        await model.collection.remove()
        await harness.settle()
        guard let capacity = harness.options.messageStoreCapacity else { return }
        // Only the soak's open collections protect messages now (their channels at most).
        var protected = 0
        for open in Self.channels { protected += try store.countMessages(channelURL: open, after: .min, before: .max) }
        let total = try store.messageCount()
        #expect(total <= max(capacity, protected) + capacity / 10, "the cache holds \(total) of \(capacity): \(context)")
        for browsed in Self.browsedChannels {
            for chunk in try store.chunks(channelURL: browsed) {
                // Ends included: a range that ends at an evicted message would make a view
                // read past it (the next read starts after the range's end).
                let (start, end) = (chunk.start, chunk.end)
                let below = MessageKey(createdAt: start.createdAt, messageId: start.messageId == .min ? .min : start.messageId - 1)
                let above = MessageKey(createdAt: end.createdAt, messageId: end.messageId == .max ? .max : end.messageId + 1)
                let inside = try store.countMessages(channelURL: browsed, after: below, before: above)
                let onServer = await harness.server.messages(in: browsed).filter { start <= $0.sortKey && $0.sortKey <= end }
                #expect(inside == onServer.count, "a complete range of \(browsed) lacks messages after eviction: \(context)")
            }
        }
    }

    /// A busy channel: others post a burst to it, alice scrolls back far into it, then
    /// closes the collection while its next older page is still out, and the trim its
    /// closing sets off runs before the page is answered. With the burst the cache is over
    /// its capacity by more than the other closed channels hold, so the trim reaches this
    /// channel and may take the page's anchor (the view no longer protects it); the stored
    /// page must then vouch only for its own messages, not for the range up to the anchor.
    /// The checks after the visit find a range that claims an evicted message.
    func closeMidFetch(_ harness: Harness, _ channelURL: String, random: inout SeededGenerator, state: inout SoakState) async throws {
        let burst = Int.random(in: 100...250, using: &random)
        let pages = Int.random(in: 2...6, using: &random)
        state.log.append("\(burst) posts to \(channelURL), then close it mid-fetch after \(pages) pages")
        for index in 0..<burst {
            try await harness.server.post(.text("burst \(index)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
        }
        let engine = harness.manager.engine
        let early = try await harness.manager.messageCollection(channelURL: channelURL, limit: 50)
        for _ in 0..<pages { _ = try await early.fetchSucceededMessages(.previous) }
        await harness.settle()
        await harness.server.holdRequests()
        let fetch = Task { _ = try? await early.fetchSucceededMessages(.previous) }
        // Served from the cache, the fetch asks nothing; otherwise its request waits.
        let held = await eventually(turns: 20_000) { await harness.server.heldRequestCount > 0 }
        await early.remove()
        if held { _ = await eventually(turns: 200_000) { await !engine.isTrimming } }
        await harness.server.releaseRequests()
        await fetch.value
    }
}
