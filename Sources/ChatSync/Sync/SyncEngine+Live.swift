// MARK: - The live edge: proving a channel live, following it, catching views up to it

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
        let held = (channels[channelURL]?.heldForLive ?? []).filter { $0.sortKey > edge }
        channels[channelURL, default: ChannelSyncState()].heldForLive.removeAll()
        if let newest = held.map(\.sortKey).max() {
            try storeBatch(held, completing: Chunk(channelURL: channelURL, start: edge, end: newest))
            edge = newest
        }
        channels[channelURL, default: ChannelSyncState()].liveEdge = edge
        channels[channelURL]?.unprovenNewest = nil
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
            let known = view.newestKnownAtOpen
            view.newestKnownAtOpen = nil
            view.reachedNewest = true
            view.upperBound = edge
            let rows = try store.page(
                channelURL: channelURL, direction: .older, from: edge, inclusive: true, bound: max(known ?? chunk.start, chunk.start),
                limit: view.limit, filter: view.filter
            ).filter { row in known.map { row.sortKey > $0 } ?? true }
            guard let oldest = rows.first else { continue }
            view.insert(rows, growing: .next)
            view.lowerBound = oldest.sortKey
        }
    }

    /// Stores the held real-time messages that a stored range now covers. A page answered
    /// before a message arrived lacks it although its range holds it (a message dated in
    /// the past); without this the range would claim to be complete without it.
    func absorbHeld(_ channelURL: String, within range: Chunk) throws {
        guard let held = channels[channelURL]?.heldForLive, !held.isEmpty else { return }
        let inside = held.filter { range.contains($0.sortKey) }
        guard !inside.isEmpty else { return }
        channels[channelURL]?.heldForLive.removeAll { range.contains($0.sortKey) }
        try store.upsertMessages(inside)
        refreshViews(channelURL, with: inside)
    }

    /// Counts a request that may prove the channel live, for the duration of `body`.
    func whileProvingLive<T>(_ channelURL: String, _ body: () async throws -> T) async rethrows -> T {
        channels[channelURL, default: ChannelSyncState()].liveCapableRequests += 1
        defer {
            channels[channelURL]?.liveCapableRequests -= 1
            if channels[channelURL]?.liveCapableRequests == 0 { channels[channelURL]?.heldForLive.removeAll() }
        }
        return try await body()
    }

    /// The chunk holding the channel's newest known message: its live edge, or the end
    /// of a page that reached the newest message before the channel could be proven live.
    func newestChunk(_ channelURL: String) throws -> Chunk? {
        guard let edge = channels[channelURL].flatMap({ $0.liveEdge ?? $0.unprovenNewest }) else { return nil }
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
            view.upperBound = max(view.upperBound ?? chunk.end, chunk.end)
        }
        if loose { startCatchUp(channelURL) }
    }

    /// Catches up, in the background, the views of a channel that reached its newest
    /// messages but do not follow the live edge (yet). Does nothing offline or when a
    /// catch-up of that channel already runs.
    func startCatchUp(_ channelURL: String) {
        guard isOnline, !catchingUp.contains(channelURL) else { return }
        catchingUp.insert(channelURL)
        runInBackground { engine in
            let epochAtStart = await engine.epoch
            var complete = true
            do { complete = try await engine.catchUp(channelURL) } catch { await engine.logCatchUpFailure(channelURL, error) }
            await engine.endCatchUp(channelURL)
            if !complete { await engine.scheduleSyncRetry(attempt: 0, epoch: epochAtStart) }
        }
    }

    func endCatchUp(_ channelURL: String) { catchingUp.remove(channelURL) }

    /// Asks for the channel's newest messages so that, over an unbroken connection, the
    /// channel goes live (and its fresh views with it). Answers `false` when the service
    /// did not answer or the page did not reach the newest message.
    func proveLive(_ channelURL: String, epoch epochAtStart: Int) async throws -> Bool {
        let query = MessageQuery(
            channelURL: channelURL, timestamp: .max, anchorMessageId: .max, prevLimit: options.syncBatchSize, nextLimit: 1)
        return try await whileProvingLive(channelURL) {
            guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed, epoch == epochAtStart
            else { return false }
            try applyPage(page, for: query, mayGoLive: isOnline)
            return channels[channelURL]?.liveEdge != nil
        }
    }

    func logCatchUpFailure(_ channelURL: String, _ error: any Error) {
        logger.warning("catching up \(channelURL) failed: \(error)")
    }

    /// Refreshes the views that hold any of `messages` (newer versions); a message
    /// that no longer matches a view's filter leaves it. With `admitting`, one that now
    /// matches enters it where the view is complete: that is for edits, not for new
    /// messages, which enter following views only when the channel goes live.
    func refreshViews(_ channelURL: String, with messages: [Message], admitting: Bool = true) {
        guard !messages.isEmpty else { return }
        for view in views(of: channelURL) {
            var updates: [Message] = []
            var removals: Set<Int64> = []
            var insertions: [Message] = []
            for message in messages {
                if view.contains(messageId: message.messageId) {
                    if view.filter.matches(message) { updates.append(message) } else { removals.insert(message.messageId) }
                } else if admitting, view.filter.matches(message),
                    view.covers(message.sortKey, followingLive: (try? isFollowingLive(view)) ?? false),
                    (try? isInCompleteRange(message.sortKey, in: channelURL)) == true
                {
                    insertions.append(message)
                }
            }
            view.remove(messageIds: removals)
            view.update(updates)
            if !insertions.isEmpty { view.insert(insertions, growing: .next) }
        }
    }
}
