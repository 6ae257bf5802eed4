// MARK: - What tests (and diagnostics) may ask of the engine

extension SyncEngine {
    /// No background work is running and every real-time event the service has
    /// delivered to the current subscription (`delivered`) has been handled.
    func isIdle(deliveredEvents delivered: Int) -> Bool {
        backgroundTaskCount == 0 && (!isRunning || connection.handledEventCount >= delivered)
    }

    /// A stream that yields whenever a background task ends or an event is handled, so
    /// that a test can wait for the engine to go idle without counting scheduler turns
    /// (which depends on the machine's speed). It keeps only the newest signal: a waiter
    /// checks ``isIdle(deliveredEvents:)`` again on each one. End it with
    /// ``endActivitySignals(_:)``.
    func activitySignals() -> (id: Int, signals: AsyncStream<Void>) {
        background.listen()
    }

    func endActivitySignals(_ id: Int) { background.stopListening(id) }

    /// Whether the channel list with `id` has paged to the service's last channel.
    func channelListReachedServerEnd(_ id: Int) -> Bool { channelLists.views[id]?.serverExhausted ?? false }

    /// The span the view with `id` holds (see ``ViewBounds``), and whether it follows the
    /// newest messages; `nil` once it is removed.
    func viewBounds(_ id: Int) -> (lower: MessageKey?, upper: MessageKey?, reachedNewest: Bool)? {
        views[id].map { ($0.lowerBound, $0.upperBound, $0.reachedNewest) }
    }

    /// Makes trims take at most `count` messages per step (see ``evictionStepSize``).
    func setEvictionStepSize(_ count: Int) { evictionStepSize = max(count, 1) }
    /// Whether a trim of the cache is running (or about to, in the background).
    var isTrimming: Bool { trimming.isRunning }

    func setEvictionStepWitness(_ witness: (@Sendable (_ channelURL: String, _ removed: Int) async -> Void)?) {
        evictionStepWitness = witness
    }
    /// Sets ``newestPageTryWitness``.
    func setNewestPageTryWitness(_ witness: (@Sendable (_ viewId: Int, _ epoch: Int, _ afterProgress: Bool) -> Void)?) {
        newestPageTryWitness = witness
    }
    /// Whether the channel's change logs were applied in the current connection.
    func changeLogsApplied(_ channelURL: String) -> Bool { channels[channelURL]?.changeLogsEpoch == epoch }

    /// Sets ``syncPassWitness``.
    func setSyncPassWitness(_ witness: (@Sendable (_ epoch: Int, _ starts: Bool) -> Void)?) { syncPassWitness = witness }

    func signalActivity() { background.signal() }

    /// Sets ``unreadEventLimit`` for collections opened from now on.
    func setUnreadEventLimit(_ count: Int) { unreadEventLimit = max(count, 0) }

    /// Sets ``failureWitness``.
    func setFailureWitness(_ witness: (@Sendable (String) -> Void)?) { failureWitness = witness }
    /// Sets ``historyDropWitness``.
    func setHistoryDropWitness(_ witness: (@Sendable (String?) -> Void)?) { historyDropWitness = witness }
    /// Sets ``limitDropWitness``.
    func setLimitDropWitness(_ witness: (@Sendable (String) -> Void)?) { limitDropWitness = witness }
    /// Sets ``operationFailureWitness``.
    func setOperationFailureWitness(_ witness: (@Sendable (OutboxOperation) -> Void)?) { operationFailureWitness = witness }

    /// Whether the view with `id` follows the channel's live edge (live messages enter it).
    func isFollowingLive(viewId id: Int) -> Bool {
        guard let view = views[id] else { return false }
        return (try? isFollowingLive(view)) == true
    }

    /// Whether the view with `id` is fresh: at `.max`, never fetched, not yet following.
    func isFresh(viewId id: Int) -> Bool { views[id]?.isFresh ?? false }

    /// Whether the channel is proven live (its newest cached messages are the service's newest).
    func isLive(_ channelURL: String) -> Bool { channels[channelURL]?.liveEdge != nil }

    /// Whether that chain ran out with `channelURL` not proven live.
    func syncRetriesRanOut(leaving channelURL: String) -> Bool {
        syncRetriesRanOut && syncPasses.leftUnproven.contains(channelURL)
    }
    /// How many chains of sync retries ran out since the manager opened.
    var syncRetryChainsRunOut: Int { syncPasses.gaveUpCount }
    /// Whether the owed newest page of the view with `id` ran through its retries on this connection.
    func owedNewestPageRanOut(viewId id: Int) -> Bool { views[id]?.owedNewestPage?.ranOutInEpoch == epoch }

    /// Whether the completion of the view's newest page is owed (see ``completeNewestPage(of:above:)``).
    func owesNewestPage(viewId id: Int) -> Bool { views[id]?.owedNewestPage != nil }
    /// How many reconnects resumed the view's owed newest page (its chain of retries).
    func newestPageChain(viewId id: Int) -> Int? { views[id]?.owedNewestPage?.chain }
    /// Whether a fill of the view's owed newest page is started or running.
    func isFillingNewestPage(viewId id: Int) -> Bool { views[id]?.owedNewestPage?.isRunning ?? false }

    /// How many catch-ups run (or are claimed), over every channel.
    var catchUpsRunning: Int { catchingUp.count }

    /// Whether an app's fetch of the view with `id` runs in `direction`: it began, and
    /// with it the view's generation it serves was read.
    func isFetching(viewId id: Int, _ direction: Direction) -> Bool { views[id]?.fetching.contains(direction) ?? false }

    /// A one-line summary of a view's state, for test diagnostics.
    func describeView(_ id: Int) -> String {
        guard let view = views[id] else { return "removed" }
        let ids = view.succeeded.map(\.messageId)
        return "\(ids.first ?? -1)...\(ids.last ?? -1)(\(ids.count)) newest=\(view.reachedNewest) "
            + "oldest=\(view.reachedOldest) bounds=\(view.lowerBound.map(String.init(describing:)) ?? "nil")..\(view.upperBound.map(String.init(describing:)) ?? "nil")"
            + " chunks=\(((try? chunks(of: view.channelURL)) ?? []).map { "\($0.start)..\($0.end)" })"
            + " live=\(channels[view.channelURL]?.liveEdge.map(String.init(describing:)) ?? "nil")"
            + " catchingUp=\(catchingUp[view.channelURL].map { String($0.epoch) } ?? "no") epoch=\(epoch) fresh=\(view.isFresh) fetching=\(view.fetching)"
    }
}

extension SyncEngine {
    /// How many further consumers (later `events` reads, observable models) message view `id` has.
    func subscriberCount(ofView id: Int) -> Int { views[id]?.outlet.subscribers.count ?? 0 }

    /// Events message view `id`'s first stream holds for a read that has not come.
    func unreadEventCount(ofView id: Int) -> Int { views[id]?.outlet.first.unreadCount ?? 0 }

    /// The most events message view `id`'s first stream holds unread: the limit in force
    /// when the view opened.
    func unreadEventLimit(ofView id: Int) -> Int { views[id]?.outlet.first.unreadLimit ?? unreadEventLimit }

    /// Whether message view `id`'s first stream was dropped unread (its first read then
    /// answered a subscription that starts from the lists).
    func firstEventStreamWasDropped(ofView id: Int) -> Bool { views[id]?.outlet.first.wasDropped ?? false }

    /// Events channel view `id`'s first stream holds for a read that has not come.
    func unreadEventCount(ofChannelView id: Int) -> Int { channelLists.views[id]?.first.unreadCount ?? 0 }
}

extension SyncEngine {
    /// Leaves real-time events in the inbox, as a busy engine would, until
    /// ``releaseEventDrain()``: a test queues a burst and has it handled in one go.
    func holdEventDrain() { eventDrainHeld = true }

    /// Handles what queued up while the drain was held (see ``holdEventDrain()``).
    func releaseEventDrain() {
        eventDrainHeld = false
        if let eventInbox { handleEvents(in: eventInbox, from: connection.subscription) }
    }

    /// Events of the current subscription handled, plus those waiting in the inbox.
    var handledOrQueuedEventCount: Int { connection.handledEventCount + (eventInbox?.waitingCount ?? 0) }
    /// How many real-time events the engine handled in the current connection.
    var handledEventCount: Int { connection.handledEventCount }
}
