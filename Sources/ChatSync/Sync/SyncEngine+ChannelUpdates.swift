// MARK: - Message collections hear of their channel's changes

extension SyncEngine {
    /// The cached copies (or `nil`, not cached) of those of `channels` that open message
    /// collections show, in their order, read before an answer of the service is stored,
    /// so that ``announceChannelChanges(_:)`` tells which of them it changed.
    func cachedCopiesShown(_ channels: [Channel]) throws -> [(channelURL: String, before: Channel?)] {
        let shown = Set(views.values.map(\.channelURL))
        guard !shown.isEmpty else { return [] }
        return try channels.filter { shown.contains($0.channelURL) }.map { ($0.channelURL, try store.channel($0.channelURL)) }
    }

    /// A channel that the service's change logs or a page changed in the cache reaches its
    /// open message collections as one a real-time channel event brings does: as
    /// `.channelUpdated` with the cached channel. Before, only real-time events did, so a
    /// chat screen never heard of a rename or a freeze made while the app was away. Called
    /// once the answer is stored and the lists are up to date; a channel the cache cannot
    /// read back is left out (logged), since nothing else may stop for a notice.
    func announceChannelChanges(_ shown: [(channelURL: String, before: Channel?)]) {
        for (channelURL, before) in shown {
            do {
                guard let now = try store.channel(channelURL), now != before else { continue }
                for view in views(of: channelURL) { view.emit(.channelUpdated(now)) }
            } catch {
                logger.error("could not tell the collections of \(channelURL) of its change: \(error)")
            }
        }
    }
}
