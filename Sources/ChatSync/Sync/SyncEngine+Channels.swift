// MARK: - Channel lists

extension SyncEngine {
    func makeChannelView(query: ChannelListQuery) throws -> (Int, FirstEventStream<ChannelCollectionEvent>) {
        try checkOpen()
        guard (1...100).contains(query.limit) else {
            throw SyncManagerError(.invalidParameter, "limit must be in 1...100 (got \(query.limit))")
        }
        let events = FirstEventStream<ChannelCollectionEvent>(unreadLimit: unreadEventLimit)
        let id = nextViewId
        nextViewId += 1
        channelLists.open(ChannelView(id: id, query: query, events: events))
        return (id, events)
    }

    func removeChannelView(_ id: Int) {
        channelLists.remove(id)?.finish()
    }

    func channels(ofView id: Int) -> [Channel] { channelLists.views[id]?.channels ?? [] }

    func channelEventCount(ofView id: Int) -> Int { channelLists.views[id]?.emittedCount ?? 0 }

    /// The next page: the cache's at once, then, when online, the service's (cached first).
    func fetchChannels(_ id: Int) async throws -> Bool {
        try checkOpen()
        guard let view = channelLists.views[id] else { throw SyncManagerError(.closed, "the channel collection was removed") }
        // The page owed from offline is on its way: the app's fetch follows it, not fails.
        while view.isFetchingOwedPage { await withCheckedContinuation { view.onOwedPageFetched($0) } }
        guard !isClosed, channelLists.isOpen(view) else { throw SyncManagerError(.closed, "the channel collection was removed") }
        guard !view.isFetching else { throw SyncManagerError(.duplicatedFetch, "a fetch is already running for this channel collection") }
        view.isFetching = true
        defer { view.isFetching = false }

        // One row more than a page tells whether the cache holds more.
        let beyond = try store.channels(matching: view.query, after: view.boundary, limit: view.query.limit + 1)
        let page = beyond.prefix(view.query.limit)
        if let last = page.last { view.extendBoundary(to: last) }
        view.apply(page.map { ($0.channelURL, $0) })
        if view.serverExhausted { return false }
        guard isOnline else {
            // Out of reach: the cache answers now, and the service's page follows by
            // itself once online, so that an app that stopped at `false` is not left short.
            let hasMore = beyond.count > view.query.limit
            if !hasMore { view.owesServerPage = true }
            view.toldNoMoreAway = !hasMore
            view.coversCache = !hasMore
            return hasMore
        }
        return try await fetchServerPage(of: view)
    }

    /// Reads the list's next page from the service into the cache and the list; answers
    /// whether the service has more.
    func fetchServerPage(of view: ChannelView, restarts: Int = 0) async throws -> Bool {
        guard try await applyChannelChangeLogsIfDue() else { return true }
        let clears = view.clears
        let query = ChannelPageQuery(
            order: view.query.order, includeEmpty: view.query.includeEmpty, customTypes: view.query.customTypes,
            limit: view.query.limit, cursor: view.serverCursor)
        let mark = channelLists.changeMark
        guard let answered = try await requestUnlessTransient({ try await $0.fetchChannels(query) }), !isClosed,
            channelLists.isOpen(view)
        else { return true }
        // The cached channels were dropped while the request was out (the change-log token
        // was refused): the answer may name channels deleted since, which no change log
        // after the new token will name, so it is not stored, and the list starts again.
        guard view.clears == clears else { return try await restartServerPages(of: view, restarts: restarts) }
        view.owesServerPage = false
        view.toldNoMoreAway = false  // the service's pages say what the list holds from here
        var page = answered
        page.channels = try keepingWhatTheCacheLearntSince(page.channels, since: mark).map(showingQueuedWrites)
        let shown = try cachedCopiesShown(page.channels)
        try store.upsertChannels(page.channels)
        reconcileChannelViews(page.channels)
        announceChannelChanges(shown)
        // A channel that moved across the cursor while paging (a new message lifts one not
        // loaded yet above it) is in no page: the change logs since the last token name it.
        channelLists.changeLogsAreDue()
        try await applyChannelChangeLogsOrRetry(startedByEvents: false)
        guard !isClosed, channelLists.isOpen(view) else { return true }
        // Dropped while the change logs were read: this page's place is gone with them.
        guard view.clears == clears else { return try await restartServerPages(of: view, restarts: restarts) }
        view.serverCursor = page.nextCursor
        view.serverExhausted = page.nextCursor == nil
        // The page reaches its last channel even when that one was removed meanwhile.
        try grow(view, to: answered.channels.last, complete: view.serverExhausted)
        return !view.serverExhausted
    }

    /// Moves the view's boundary to `last` (or past every channel, `complete`) and takes
    /// in the cached channels between the old boundary and the new one, read by keyset.
    private func grow(_ view: ChannelView, to last: Channel?, complete: Bool) throws {
        let old = view.boundary
        if let last { view.extendBoundary(to: last) }
        if complete { view.isComplete = true }
        guard complete || view.boundary != old else { return }
        let added = try store.channels(matching: view.query, after: old, through: complete ? nil : view.boundary)
        view.apply(added.map { ($0.channelURL, $0) })
    }

    /// Online: what the service says, not the cache alone, is what a list told it has no
    /// more while away holds from here (its owed page follows).
    func uncoverTheCacheOnceOnline() {
        for view in channelLists.viewsInOrder { view.coversCache = false }
    }

    /// Away from the service again: lists told they have no more while away, whose page
    /// after that has not come, hold every cached channel again (one that left them
    /// while the connection was back, moving below the last row, returns).
    ///
    /// A list whose page is on its way is left alone: that page's answer alone moves its
    /// boundary, by which the owed page tells whether it went past the list.
    func coverTheCacheWhileAway() {
        for view in channelLists.viewsInOrder where view.toldNoMoreAway && !view.coversCache && !view.isFetching {
            do {
                let beyond = try store.channels(matching: view.query, after: view.boundary)
                view.coversCache = true
                view.apply(beyond.map { ($0.channelURL, $0) })
            } catch {
                logger.warning("a channel list could not read the cached channels below it: \(error)")
            }
        }
    }

    /// Once online: the pages lists asked for while the service was out of reach.
    /// Answers whether every one of them was fetched (a transient failure leaves it
    /// owed, for the reconnect's retry).
    func fetchOwedChannelPages() async -> Bool {
        for view in channelLists.viewsInOrder {
            guard view.owesServerPage, !view.isFetching, channelLists.isOpen(view) else { continue }
            guard isOnline, !isClosed else { return false }
            view.isFetching = true
            view.startOwedPage()
            defer {
                view.isFetching = false
                view.finishOwedPage()
            }
            do {
                try await fetchPageBeyondShown(of: view)
            } catch {
                // A refusal is the app's to hear, at its next fetch; retrying it here helps nobody.
                if !ChatServiceError.classify(error).isTransient { view.owesServerPage = false }
                logger.warning("the channel list's page after reconnecting failed: \(error)")
            }
        }
        return !channelLists.views.values.contains { $0.owesServerPage }
    }

    /// Empties every open list, which then owes the service's first page: fetched now,
    /// with a retry of the sync if it could not be, and by the reconnect's pass when
    /// offline (both return at once then). For a cache cleared or channels dropped with
    /// a refused token.
    func clearListsOwingTheirFirstPage() {
        for view in channelLists.viewsInOrder {
            view.clear()
            view.owesServerPage = true
        }
        let cleared = epoch
        runInBackground { engine in
            if await !engine.fetchOwedChannelPages() { await engine.scheduleSyncRetry(attempt: 0, epoch: cleared) }
        }
    }

    /// The service's page after the channels the list shows. The list paged the cache
    /// offline, but the service's cursor starts at its first page: pages the list shows
    /// already are read again (into the cache, which they refresh) until one reaches past
    /// them, so the owed page brings what the app could not see offline.
    ///
    /// The page stays owed until one reaches past the list (or the service has no more):
    /// a page left unanswered, out of reach, is fetched again by the reconnect's retry.
    private func fetchPageBeyondShown(of view: ChannelView) async throws {
        // The pages the list shows, and one more for channels that moved up meanwhile.
        let shownPages = view.channels.count / view.query.limit + 2
        for _ in 0..<shownPages {
            let (shown, cursor) = (view.boundary, view.serverCursor)
            guard try await fetchServerPage(of: view), view.boundary == shown, channelLists.isOpen(view) else { return }
            view.owesServerPage = true
            // No page came (the cursor moves with every page): the retry asks again.
            guard view.serverCursor != cursor else { return }
        }
        view.owesServerPage = false
    }

    /// A fetch of the list's pages that the list's clearing overtook starts again from the
    /// service's first page, at most twice; after that the list stays owed, for the
    /// reconnect's retry.
    private func restartServerPages(of view: ChannelView, restarts: Int) async throws -> Bool {
        guard restarts < 2 else { return true }
        return try await fetchServerPage(of: view, restarts: restarts + 1)
    }

    /// Whether the service said it has more channels for the list than it shows: after
    /// an owed page, the app's last `fetch()` (offline, `false`) no longer holds.
    func channelListMayHaveMore(_ id: Int) -> Bool {
        guard let view = channelLists.views[id] else { return false }
        return view.serverCursor != nil && !view.serverExhausted
    }

    /// Shows channels the cache just took in every list, each at its place.
    func reconcileChannelViews(_ changed: [Channel]) {
        guard !changed.isEmpty else { return }
        for view in channelLists.viewsInOrder { view.apply(changed.map { ($0.channelURL, $0) }) }
    }

    /// Shows one channel's change in every list.
    func reconcileChannelViews(channelURL: String, now channel: Channel?) {
        for view in channelLists.viewsInOrder { view.reconcile(channelURL: channelURL, now: channel) }
    }
}
