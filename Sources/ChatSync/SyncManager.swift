import Logging

/// The entry point of ChatSync: one user's cache, outbox and sync with a chat service.
///
/// Creating a manager opens (or creates) the cache and touches no network;
/// ``resumeSync()`` starts background sync, the outbox and real-time events.
///
/// ```swift
/// let manager = try await SyncManager(userId: "alice", service: myService,
///                                     databasePath: cachePath)
/// await manager.resumeSync()
/// // … use collections and send messages …
/// await manager.close()
/// ```
///
/// After ``close()`` every throwing call throws ``SyncManagerError/Code/closed``;
/// the others do nothing.
public final class SyncManager: Sendable {
    /// The user whose cache this is.
    public let userId: String
    /// The options the manager was created with.
    public let options: SyncManagerOptions
    let engine: SyncEngine

    /// Opens the cache of `userId` and validates `options`. Touches no network.
    ///
    /// - Parameters:
    ///   - userId: the signed-in user; a cache file belongs to one user. Ids are compared
    ///     by their UTF-8 bytes, as services compare them: "zo\u{EB}" and "zoe\u{308}",
    ///     equal to Swift's `==`, are two users, and neither opens the other's cache or
    ///     changes the other's messages.
    ///   - service: the backend, through which every request and real-time event passes.
    ///   - databasePath: the cache file, created when missing; `nil` keeps
    ///     the cache in memory. One manager has a file open at a time (a lock file,
    ///     `<path>-lock`, beside it says which): a manager keeps what it knows of its file
    ///     in memory, and would not see another's writes.
    ///   - options: limits and policies, validated here.
    /// - Throws: ``SyncManagerError`` with ``SyncManagerError/Code/invalidParameter``
    ///   for an empty user id, an empty database path or an option out of range,
    ///   ``SyncManagerError/Code/userMismatch`` for another user's cache,
    ///   ``SyncManagerError/Code/corruptDatabase`` for a damaged file, and
    ///   ``SyncManagerError/Code/databaseIO`` for a file another manager has open (in this
    ///   process or another; close that one first), a lock file that cannot be made (a
    ///   missing directory), or a schema newer than this library.
    public init(
        userId: String, service: any ChatService, databasePath: String?, options: SyncManagerOptions = .init()
    ) async throws {
        guard !userId.isEmpty else { throw SyncManagerError(.invalidParameter, "userId must not be empty") }
        guard databasePath?.isEmpty != true else {
            throw SyncManagerError(.invalidParameter, "databasePath must not be empty; pass nil for a cache in memory")
        }
        try options.validate()
        let store = try ChatStore.open(path: databasePath, userId: userId)
        self.userId = userId
        self.options = options
        do {
            self.engine = try SyncEngine(store: store, service: service, options: options, userId: userId)
        } catch {
            store.close()  // lets the file go now, not whenever the store is released
            throw error
        }
        // A cache opened with a smaller capacity than it holds is trimmed in the background.
        await engine.trimAtOpen()
        await engine.showQueuedWritesInPreviews()
        options.logger.info("ChatSync opened the cache of \(userId) at \(databasePath ?? "memory")")
    }

    /// Starts or continues background sync, the outbox and real-time events.
    ///
    /// Returns once the service has reported its connection state (the first event
    /// of its subscription), so ``connectionState`` is meaningful right after.
    public func resumeSync() async {
        await engine.resume()
    }

    /// Stops network work; the cache stays readable.
    public func pauseSync() async {
        await engine.pause()
    }

    /// Drops cached messages, channels and chunks, and the record of messages synced lately
    /// that ``SyncManager/message(reqId:)`` falls back on; keeps the outbox, so nothing
    /// unsent is lost.
    ///
    /// Open collections stay open and empty (one `.clear` event each). One that showed
    /// the newest messages stands at them again: it gets the newest page and follows the
    /// channel, which the clear proves live at once when online (when the collection's own
    /// fetch was out, as that fetch ends), and the next reconnect otherwise. One in history
    /// keeps its viewpoint and fills again from the service as the app fetches. Open
    /// channel lists are emptied and get the service's first page by themselves (online at
    /// once, otherwise at the reconnect), as after a refused channel change-log token.
    public func clearCache() async throws {
        try await engine.clearCache()
    }

    /// Stops everything and closes the database.
    public func close() async {
        await engine.close()
    }

    /// The connection to the service as it last reported it; `.offline` while paused or closed.
    public var connectionState: ConnectionState {
        get async { await engine.connectionState }
    }
}
