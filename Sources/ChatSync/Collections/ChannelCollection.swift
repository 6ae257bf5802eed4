/// The user's channels, cached and live, in the order of a ``ChannelListQuery``.
///
/// ```swift
/// let list = try await manager.channelCollection(query: ChannelListQuery(limit: 30))
/// Task { for await event in list.events { render(event) } }
/// var hasMore = try await list.fetch()            // first page, from the cache at once
/// if hasMore { hasMore = try await list.fetch() } // scrolled to the end
/// ```
///
/// A channel that sorts below the loaded pages does not appear until a fetch reaches
/// it. New messages (received, or sent from this device) update a channel's
/// `lastMessage` and move it; channels created, changed, deleted or left are inserted,
/// updated or removed; after a pause or a lost connection the channel change logs are
/// applied first. Offline the cached list is served without network calls.
public final class ChannelCollection: Sendable {
    /// What the collection lists.
    public let query: ChannelListQuery
    /// The collection's events, created with it; buffered without limit, for one consumer.
    public let events: AsyncStream<ChannelCollectionEvent>

    let id: Int
    let engine: SyncEngine

    init(id: Int, query: ChannelListQuery, events: AsyncStream<ChannelCollectionEvent>, engine: SyncEngine) {
        self.id = id
        self.query = query
        self.events = events
        self.engine = engine
    }

    deinit {
        let (engine, id) = (engine, id)
        Task { await engine.removeChannelView(id) }
    }

    /// Loads the next page: from the cache at once, then from the service when online
    /// (what it answers is cached).
    ///
    /// - Returns: `hasMore`: `false` once the service (or, offline, the cache) has no more.
    ///   A fetch that ran out of cached channels offline is followed, once online, by
    ///   the service's next page, delivered as events; a `fetch()` made while that page
    ///   is on its way waits for it and then loads the page after it.
    /// - Throws: ``SyncManagerError/Code/closed`` after ``remove()`` or `close()`.
    @discardableResult
    public func fetch() async throws -> Bool {
        try await engine.fetchChannels(id)
    }

    /// The loaded channels, in the query's order.
    public var channels: [Channel] {
        get async { await engine.channels(ofView: id) }
    }

    /// Stops the collection's events and releases it.
    public func remove() async {
        await engine.removeChannelView(id)
    }
}
