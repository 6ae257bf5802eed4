/// A paginated, live view of one channel's messages, served from the local cache.
///
/// A collection starts at a viewpoint (``SyncManager/messageCollection(channelURL:filter:viewpoint:limit:)``;
/// `.max` means "the newest messages") and grows with
/// ``fetchSucceededMessages(_:)`` in either direction. Messages come as
/// ``MessageCollectionEvent``s on ``events`` (or to a handler), in three lists:
/// succeeded (synced), pending and failed.
///
/// ```swift
/// let collection = try await manager.messageCollection(channelURL: "general")
/// Task {
///     for await event in collection.events { render(event) }
/// }
/// var hasMore = try await collection.fetchSucceededMessages(.previous)   // newest page
/// // when the user scrolls to the top:
/// hasMore = try await collection.fetchSucceededMessages(.previous)
/// // when the screen closes:
/// await collection.remove()
/// ```
///
/// Guarantees: replaying the events gives exactly the three snapshots; a message is
/// never in two lists or twice in one; the succeeded list is sorted by
/// `(createdAt, messageId)` and never skips a matching message of the channel
/// between its oldest and newest.
///
/// Live messages enter a collection at the newest edge: once a `.next` fetch returned
/// `false`, or at viewpoint `.max` once its first page was read (offline, from the newest
/// cached page; the reconnect then catches it up or reports a huge gap). A collection at
/// `.max` that was never fetched follows too: when the channel is proven live (at the
/// first message that arrives, or the reconnect) it takes in what the device learned of
/// since it opened, at most a page, then every new message. Nothing is emitted before
/// something happens in the channel or the app fetches. Background work may emit before
/// the app gets to set a handler: a handler set before the app first fetches or reads a
/// list is first sent everything emitted so far (see ``setHandler(_:)``).
public final class MessageCollection: Sendable {
    /// The channel this collection shows.
    public let channelURL: String
    /// The messages it keeps.
    public let filter: MessageFilter
    /// How many messages one fetch delivers at most.
    public let limit: Int
    /// The collection's events, buffered without limit.
    ///
    /// The first read of `events` answers the stream created with the collection: every
    /// event since it opened. Unread, that stream holds at most 1,000 events and is then
    /// dropped (a screen that only sets a handler or shows a model keeps no growing
    /// buffer); the first read after that is a subscription like a later one. Each later read answers a new subscription of its own, which
    /// starts with the lists as insertions (`.succeeded`, `.pending`, `.failed`; none for
    /// an empty list) as they are when it is registered, in the background right after the
    /// read, and then carries every event from there, so that two loops over
    /// `events` never split the events between them and each one's replay gives the lists.
    /// (One stream still has one consumer: iterate a stream you stored in one loop only.)
    /// A subscription of a removed collection ends at once.
    public var events: AsyncStream<MessageCollectionEvent> { eventStreams.next() }

    let id: Int
    let engine: SyncEngine
    private let eventStreams: EventStreams<MessageCollectionEvent>

    init(
        id: Int, channelURL: String, filter: MessageFilter, limit: Int, events: FirstEventStream<MessageCollectionEvent>,
        engine: SyncEngine
    ) {
        self.id = id
        self.channelURL = channelURL
        self.filter = filter
        self.limit = limit
        self.engine = engine
        self.eventStreams = EventStreams(first: events) { [engine] in
            await engine.subscribe(toView: id, .events($0))
        }
    }

    deinit {
        // A collection dropped without `remove()` still releases its view.
        let (engine, id) = (engine, id)
        Task { await engine.removeView(id) }
    }

    /// The viewpoint fetches started from (see ``resetViewpointTimestamp(_:)``).
    public var viewpoint: Int64 {
        get async { await engine.viewpoint(id) ?? .max }
    }

    /// Sets (or with `nil` clears) a handler that receives the same events as ``events``, in the same order.
    ///
    /// The first handler set before the app first fetches, reads a list or resets the
    /// viewpoint is first sent every event emitted since the collection was created, so
    /// it sees exactly what ``events`` sees. A handler set later receives events from when
    /// it is set (what came before is in the lists the app read). At most 1,000 events are
    /// kept for it: past that (a collection nobody fetched, read or handled for that
    /// long), none are, and a handler set then starts from when it is set.
    public func setHandler(_ handler: (any MessageCollectionHandler)?) async {
        await engine.setHandler(handler, for: id)
    }

    // MARK: - Fetching

    /// Delivers up to ``limit`` messages older (`.previous`) or newer (`.next`) than
    /// the view holds, as `.succeeded(.insert, …)` events, possibly in several
    /// batches. Served from the cache where it is known complete; the rest is synced
    /// from the service first. Offline it delivers what the cache holds and does not wait.
    ///
    /// - Returns: `hasMore`: `false` once that direction is known to be exhausted. A
    ///   fetch under way when the viewpoint is reset, the collection removed or the
    ///   manager closed stops delivering and answers `true` (the end is not known); the
    ///   next call on a removed collection throws.
    /// - Throws: ``SyncManagerError/Code/duplicatedFetch`` while a fetch in the same
    ///   direction runs; ``SyncManagerError/Code/closed`` after ``remove()`` or
    ///   `close()`; ``ChatServiceError`` when the service refuses for good (for
    ///   example, the user is no longer a member).
    @discardableResult
    public func fetchSucceededMessages(_ direction: Direction) async throws -> Bool {
        try await engine.fetchSucceeded(id, direction)
    }

    /// Fetches `.next` until the view holds the newest message. Offline it delivers what
    /// the cached range the view is in holds beyond it. It ends early, without throwing, when a round
    /// brings nothing newer (offline past the cache, or the service failed for now): a
    /// later call, or the sync's own retries, go on from there.
    public func fetchAllNextMessages() async throws {
        try await engine.fetchAllNext(id)
    }

    /// Adds the channel's pending messages that were in the outbox before the collection
    /// existed, and those the service answered for whose echo has not come, as
    /// `.pending(.insert, …)` events. A failed message being resent is not among them: it
    /// stays in the failed list until it is sent. Messages already listed are not added
    /// again, so calling it more than once is safe.
    ///
    /// - Throws: ``SyncManagerError/Code/closed`` after ``remove()`` or `close()`.
    public func fetchPendingMessages() async throws {
        try await engine.fetchPending(id)
    }

    /// Adds the channel's failed messages that were in the outbox before the collection
    /// existed, those being resent included, as `.failed(.insert, …)` events. Messages
    /// already listed are not added again, so calling it more than once is safe.
    ///
    /// - Throws: ``SyncManagerError/Code/closed`` after ``remove()`` or `close()`.
    public func fetchFailedMessages() async throws {
        try await engine.fetchFailed(id)
    }

    /// Empties the succeeded list with one `.succeeded(.clear, [])` and moves the
    /// viewpoint; following fetches start from `timestamp` (`.max`: the newest).
    public func resetViewpointTimestamp(_ timestamp: Int64) async throws {
        try await engine.resetViewpoint(id, to: timestamp)
    }

    // MARK: - Snapshots

    /// The succeeded messages in the view, ascending by `(createdAt, messageId)`.
    public var succeededMessages: [Message] {
        get async { await engine.succeededMessages(id) }
    }

    /// The pending messages, ascending by creation.
    public var pendingMessages: [Message] {
        get async { await engine.pendingMessages(id) }
    }

    /// The failed messages, ascending by creation.
    public var failedMessages: [Message] {
        get async { await engine.failedMessages(id) }
    }

    /// How many succeeded messages the view holds.
    public var messageCount: Int {
        get async { await engine.succeededCount(id) }
    }

    // MARK: - Messages the host sends itself (Guarantees: Host-sent messages)

    /// Shows a message the app is sending through its own SDK as pending
    /// (`.pending(.insert)`). Its `reqId` must be set (and hold no NUL), and its `senderId`
    /// be empty (the user is filled in) or the user's own, byte for byte; anything else is
    /// ``SyncManagerError/Code/invalidParameter``. ChatSync never sends it, only
    /// resolves it by `reqId` (here, by real-time echo, by sync, or after a relaunch).
    /// One whose echo came before the call is not added: it shows as succeeded already.
    /// One whose answer the host handed over before the call is resolved with it at once.
    public func appendMessage(_ message: Message) async throws {
        try await engine.appendHostMessage(message, toViewOf: id)
    }

    /// Resolves a message given to ``appendMessage(_:)``: with the sent message and no
    /// error it leaves the pending list for the succeeded one; with an error the resend
    /// policy applies (the automatic policy never resends a host's message).
    public func handleSendMessageResponse(_ message: Message?, error: (any Error)?) async {
        await engine.handleHostResponse(message, error: error)
    }

    /// Applies an edit the host made through its own SDK (succeeded messages only).
    public func updateMessage(_ message: Message) async throws {
        try await engine.updateHostMessage(message)
    }

    /// Applies a deletion the host made through its own SDK, or removes an unsent
    /// appended message by `reqId`.
    public func deleteMessage(_ message: Message) async throws {
        try await engine.deleteHostMessage(message)
    }

    // MARK: - Disposal

    /// Stops the collection's events and background work and releases its view.
    /// Later calls throw ``SyncManagerError/Code/closed``.
    public func remove() async {
        await engine.removeView(id)
    }
}
