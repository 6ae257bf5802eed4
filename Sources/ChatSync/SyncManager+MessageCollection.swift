extension SyncManager {
    /// Opens a live view of a channel's messages.
    ///
    /// ```swift
    /// let photos = try await manager.messageCollection(
    ///     channelURL: "general", filter: MessageFilter(kinds: [.image]), viewpoint: .max, limit: 30)
    /// ```
    ///
    /// - Parameters:
    ///   - channelURL: the channel to show.
    ///   - filter: which messages the view shows; the default shows all.
    ///   - viewpoint: where the view starts, in milliseconds since 1970; `.max` for the newest messages.
    ///   - limit: messages per fetch, in `1...messageCollectionCapacity`.
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for an empty channel URL (or one holding a NUL) or a
    ///   limit out of range; ``SyncManagerError/Code/closed`` after `close()`.
    public func messageCollection(
        channelURL: String, filter: MessageFilter = .init(), viewpoint: Int64 = .max, limit: Int = 50
    ) async throws -> MessageCollection {
        try await engine.makeCollection(channelURL: channelURL, filter: filter, viewpoint: viewpoint, limit: limit)
    }
}
