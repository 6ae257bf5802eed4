// MARK: - The live edge: a channel goes live, and the views that follow it keep up

extension SyncEngine {
    /// Whether `key` lies inside one of the channel's complete ranges.
    func isInCompleteRange(_ key: MessageKey, in channelURL: String) throws -> Bool {
        try chunks(of: channelURL).contains { $0.contains(key) }
    }

    /// The channel is complete up to `edge` and nothing newer exists: from now on
    /// real-time messages extend it. Messages held while the proving request was in
    /// flight join first. Views that follow the newest messages get what they miss.
    func goLive(_ channelURL: String, at edge: MessageKey) throws {
        var edge = max(edge, channels[channelURL]?.liveEdge ?? edge)
        let held = try withKnownReqIds((channels[channelURL]?.heldForLive ?? []).filter { $0.sortKey > edge })
        channels[channelURL, default: ChannelSyncState()].heldForLive.removeAll()
        if let newest = held.map(\.sortKey).max() {
            try resolveOwnUpdates(held, in: channelURL)
            try storeBatch(held, completing: Chunk(channelURL: channelURL, start: edge, end: newest), vouchedEdge: edge)
            edge = newest
        }
        channels[channelURL, default: ChannelSyncState()].liveEdge = edge
        channels[channelURL]?.unprovenNewest = nil
        channels[channelURL]?.forgetFreshArrivals()
        try adoptFreshViews(channelURL, at: edge)
        try pumpLive(channelURL)
    }

    /// Lets the channel's fresh views (at `.max`, never fetched) follow the newest
    /// messages: at once when the channel is live. Otherwise a request proves it live
    /// when the first real-time message of the channel arrives (or at the reconnect),
    /// not at once: a collection emits nothing before the app could set its handler,
    /// unless something happens in the channel.
    func followNewest(_ channelURL: String) {
        let fresh = views(of: channelURL).filter(\.isFresh)
        guard !fresh.isEmpty else { return }
        let newest = (try? store.newestMessage(channelURL: channelURL))?.sortKey
        for view in fresh where view.newestKnownAtOpen == nil { view.newestKnownAtOpen = newest }
        if let live = channels[channelURL]?.liveEdge { try? adoptFreshViews(channelURL, at: live) }
    }

    /// A fresh view stands at the newest edge: from `edge` on, live messages enter it.
    /// What the device learned of since it opened (the messages after the newest it had
    /// cached then, at most a page) enters it now, so that a message that arrived while
    /// the channel was being proven live is not left out.
    private func adoptFreshViews(_ channelURL: String, at edge: MessageKey) throws {
        let fresh = views(of: channelURL).filter(\.isFresh)
        guard !fresh.isEmpty, let chunk = try liveChunk(channelURL) else { return }
        for view in fresh {
            // `.min` (set by a clear): nothing known, so no floor either (a floor would stop
            // the page's completion short of marking the channel's oldest message reached).
            let known = view.newestKnownAtOpen == .min ? nil : view.newestKnownAtOpen
            view.newestKnownAtOpen = nil
            view.bounds.reachNewest(at: edge)  // a fresh view has no bounds yet: they start here
            let rows = try store.page(
                channelURL: channelURL, direction: .older, from: edge, inclusive: true, bound: max(known ?? chunk.start, chunk.start),
                limit: view.limit, filter: view.filter
            ).filter { row in known.map { row.sortKey > $0 } ?? true }
            // Rows whose deletion is queued stay hidden: only what the view shows fills its page.
            var shown = 0
            if let oldest = rows.first {
                shown = view.insert(rows, growing: .next)
                view.bounds.extendLower(to: oldest.sortKey)
            }
            if canReachService, newestPageIsShort(view, shown: shown, read: rows.count, chunk: chunk, known: known) {
                completeNewestPage(of: view, above: known)
            }
        }
    }

    /// The chunk holding the channel's newest known message: its live edge, or the end
    /// of a page that reached the newest message before the channel could be proven live.
    func newestChunk(_ channelURL: String) throws -> Chunk? {
        guard let edge = channels[channelURL]?.newestKnown else { return nil }
        return try chunks(of: channelURL).first { $0.contains(edge) }
    }

    /// The channel's chunk holding its live edge, if it is live.
    func liveChunk(_ channelURL: String) throws -> Chunk? {
        guard let live = channels[channelURL]?.liveEdge else { return nil }
        return try chunks(of: channelURL).first { $0.contains(live) }
    }

    /// Whether a view that reached the newest messages is still joined to the live
    /// edge by complete ranges. A view can come loose when the connection breaks and
    /// another fetch makes the channel live again from a different chunk.
    func isFollowingLive(_ view: MessageView) throws -> Bool {
        guard view.reachedNewest, let live = channels[view.channelURL]?.liveEdge else { return false }
        let upper = view.upperBound ?? view.viewpointKey
        if upper >= live { return true }
        return try liveChunk(view.channelURL)?.contains(upper) ?? false
    }

    /// Brings every view that follows the live edge up to it; views that reached the
    /// newest messages but came loose are caught up in the background.
    func pumpLive(_ channelURL: String) throws {
        guard let chunk = try liveChunk(channelURL) else { return }
        var loose = false
        for view in views(of: channelURL) where view.reachedNewest {
            guard try isFollowingLive(view) else {
                loose = true
                continue
            }
            var from = view.upperBound ?? view.viewpointKey
            while from < chunk.end {
                let rows = try store.page(
                    channelURL: channelURL, direction: .newer, from: from, inclusive: false, bound: chunk.end,
                    limit: view.capacity, filter: view.filter)
                if rows.isEmpty { break }
                view.insert(rows, growing: .next)
                from = rows[rows.count - 1].sortKey
                if rows.count < view.capacity { break }
            }
            view.bounds.extendUpper(to: chunk.end)
        }
        if loose { startCatchUp(channelURL) }
    }

}
