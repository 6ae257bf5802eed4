extension SyncManager {
    /// Opens a cached, live list of the user's channels.
    ///
    /// ```swift
    /// let list = try await manager.channelCollection(query: ChannelListQuery(order: .chronological))
    /// ```
    ///
    /// - Throws: ``SyncManagerError/Code/invalidParameter`` for a limit outside `1...100`;
    ///   ``SyncManagerError/Code/closed`` after `close()`.
    public func channelCollection(query: ChannelListQuery = .init()) async throws -> ChannelCollection {
        let (id, events) = try await engine.makeChannelView(query: query)
        return ChannelCollection(id: id, query: query, events: events, engine: engine)
    }
}
