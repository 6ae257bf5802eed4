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
    /// The collection's events, buffered without limit.
    ///
    /// The first read of `events` answers the stream created with the collection: every
    /// event since it opened. Unread, that stream holds at most 1,000 events and is then
    /// dropped (a screen that only sets a handler or shows a model keeps no growing
    /// buffer); the first read after that is a subscription like a later one. Each later read answers a new subscription of its own, which
    /// starts with the loaded channels as one insertion (none when there are none) as they
    /// are when it is registered, in the background right after the read, and then carries
    /// every event from there, so that two loops over `events` never split the events
    /// between them. (One stream still has one consumer: iterate a stream you stored in
    /// one loop only.) A subscription of a removed collection ends at once.
    public var events: AsyncStream<ChannelCollectionEvent> { eventStreams.next() }

    let id: Int
    let engine: SyncEngine
    private let eventStreams: EventStreams<ChannelCollectionEvent>

    init(id: Int, query: ChannelListQuery, events: FirstEventStream<ChannelCollectionEvent>, engine: SyncEngine) {
        self.id = id
        self.query = query
        self.engine = engine
        self.eventStreams = EventStreams(first: events) { [engine] in
            await engine.subscribe(toChannelView: id, .events($0))
        }
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
    ///   the service's page after the channels the list shows, delivered as events (an
    ///   app that stopped at `false` calls `fetch()` again for more; a
    ///   ``ChannelCollectionModel`` sets its `hasMore` again by itself); a `fetch()` made
    ///   while that page is on its way waits for it and then loads the page after it.
    ///   As for a message collection, a fetch under way when the collection is removed
    ///   or the manager closed stops and answers `true` (the end is not known), or
    ///   throws ``SyncManagerError/Code/closed`` if it was still waiting for that owed
    ///   page; the next call throws.
    /// - Throws: ``SyncManagerError/Code/closed`` after ``remove()`` or `close()`.
    @discardableResult
    public func fetch() async throws -> Bool {
        try await engine.fetchChannels(id)
    }

    /// Whether the service said it has more channels than the list shows (see
    /// ``ChannelCollectionModel/hasMore``).
    var mayHaveMore: Bool {
        get async { await engine.channelListMayHaveMore(id) }
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
