// MARK: - Collections' views

extension SyncEngine {
    /// Registers a view and answers its id and event stream.
    func makeView(
        channelURL: String, filter: MessageFilter, viewpoint: Int64, limit: Int
    ) throws -> (id: Int, events: FirstEventStream<MessageCollectionEvent>) {
        try checkOpen()
        try Self.checkKey(channelURL, named: "channelURL")
        guard (1...options.messageCollectionCapacity).contains(limit) else {
            throw SyncManagerError(
                .invalidParameter, "limit must be in 1...\(options.messageCollectionCapacity) (got \(limit))")
        }
        let events = FirstEventStream<MessageCollectionEvent>(unreadLimit: unreadEventLimit)
        let id = nextViewId
        nextViewId += 1
        views[id] = MessageView(
            id: id, channelURL: channelURL, filter: filter, viewpoint: viewpoint, limit: limit,
            capacity: options.messageCollectionCapacity, pendingWrites: pendingWrites, events: events)
        followNewest(channelURL)
        noteViewed(channelURL)
        return (id, events)
    }

    /// Opens a view and its public collection in one turn of the engine (one hop for the
    /// app, and no moment in which the view's handler has no collection to name).
    func makeCollection(channelURL: String, filter: MessageFilter, viewpoint: Int64, limit: Int) throws -> MessageCollection {
        let (id, events) = try makeView(channelURL: channelURL, filter: filter, viewpoint: viewpoint, limit: limit)
        let collection = MessageCollection(
            id: id, channelURL: channelURL, filter: filter, limit: limit, events: events, engine: self)
        views[id]?.outlet.collection = collection
        return collection
    }

    /// The view with `id`, or ``SyncManagerError/Code/closed`` if it was removed.
    func view(_ id: Int) throws -> MessageView {
        try checkOpen()
        guard let view = views[id] else { throw SyncManagerError(.closed, "the collection was removed") }
        return view
    }

    func removeView(_ id: Int) {
        guard let view = views.removeValue(forKey: id) else { return }
        view.outlet.finish()
        guard !isClosed else { return }
        noteViewed(view.channelURL)
        trimAfterViewClosed()
    }

    func setHandler(_ handler: (any MessageCollectionHandler)?, for id: Int) {
        views[id]?.outlet.setHandler(handler)
    }

    func views(of channelURL: String) -> [MessageView] {
        views.values.filter { $0.channelURL == channelURL }.sorted { $0.id < $1.id }
    }

    // MARK: Snapshots

    // The app read a list: what was emitted so far is in it, so a handler set after this
    // must not be sent those events again (it would show them twice).
    func succeededMessages(_ id: Int) -> [Message] {
        views[id]?.outlet.appActed()
        return views[id].map { Array($0.succeeded) } ?? []
    }
    func succeededCount(_ id: Int) -> Int {
        views[id]?.outlet.appActed()
        return views[id]?.succeeded.count ?? 0
    }
    func pendingMessages(_ id: Int) -> [Message] {
        views[id]?.outlet.appActed()
        return views[id]?.pending ?? []
    }
    func failedMessages(_ id: Int) -> [Message] {
        views[id]?.outlet.appActed()
        return views[id]?.failed ?? []
    }
    func viewpoint(_ id: Int) -> Int64? { views[id]?.viewpoint }

    // MARK: Viewpoint

    func resetViewpoint(_ id: Int, to timestamp: Int64) throws {
        let view = try view(id)
        view.outlet.appActed()
        view.clearSucceeded(viewpoint: timestamp)
        followNewest(view.channelURL)
    }

    // MARK: Pending and failed lists

    /// Adds the outbox's pending messages of the channel that match the filter, and the
    /// ones answered but still waiting for their echo: they left the outbox, and are not
    /// cached yet, so a view opened meanwhile showed them nowhere until the echo came.
    func fetchPending(_ id: Int) throws {
        let view = try view(id)
        view.outlet.appActed()
        for answer in awaitedAnswers(of: view, inFailedList: false) { view.upsertPending(answer) }
        // A failed message being resent is on its way again but stays in the failed list
        // (API §4.3), so it is not listed here, where a view holding it would list it twice.
        let entries = try store.outboxEntries(channelURL: view.channelURL, states: [.created, .uploading, .syncing])
        for entry in entries
        where !entry.isInFailedList && view.filter.matches(entry.message) && !view.isPending(entry.reqId) && !view.isFailed(entry.reqId) {
            view.upsertPending(entry.message)
        }
    }

    /// Adds the outbox's failed messages of the channel that match the filter, those
    /// being resent included: they stay in the failed list until they are sent, and
    /// those answered on a resend until their echo comes.
    func fetchFailed(_ id: Int) throws {
        let view = try view(id)
        view.outlet.appActed()
        try enforceFailedLimits(channelURL: view.channelURL)
        for answer in awaitedAnswers(of: view, inFailedList: true) { view.upsertFailed(answer, reason: .none) }
        for entry in try store.failedListEntries(channelURL: view.channelURL)
        where view.filter.matches(entry.message) && !view.isFailed(entry.reqId) {
            view.upsertFailed(entry.message, reason: .none)
        }
    }

    /// The answers of the view's channel still waiting for their echo that the view does
    /// not list yet and that belong in its pending list, or (answered on a resend) in its
    /// failed list, as the lists show them. Sorted: the lists order them, and sorting
    /// first only fixes the order of a millisecond's ties.
    private func awaitedAnswers(of view: MessageView, inFailedList: Bool) -> [Message] {
        outbox.awaitingEcho.values
            .filter {
                $0.channelURL == view.channelURL && outbox.isAwaitedInFailedList($0.reqId) == inFailedList
                    && !view.isPending($0.reqId) && !view.isFailed($0.reqId)
            }
            .sorted { $0.sortKey < $1.sortKey }
            .compactMap { answer in pendingWrites.overlaid(answer).flatMap { view.filter.matches($0) ? pendingCopy(of: $0) : nil } }
    }

    /// Refreshes the views that hold any of `messages` (newer versions); a message
    /// that no longer matches a view's filter leaves it. With `admitting`, one that now
    /// matches enters it where the view is complete: that is for edits, not for new
    /// messages, which enter following views only when the channel goes live.
    ///
    /// `followingMoves: false` is for a caller whose store write followed them already
    /// (``storeBatch(_:completing:vouchedEdge:authoritative:)`` does).
    func refreshViews(_ channelURL: String, with messages: [Message], admitting: Bool = true, followingMoves: Bool = true) {
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
        // An update never moves a message in a view; where the cache took a copy dated
        // elsewhere, the views follow it.
        if followingMoves { followMovedCopies(messages, in: channelURL) }
    }
}
