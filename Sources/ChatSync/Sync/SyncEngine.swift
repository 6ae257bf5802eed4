import Logging

/// The one serial owner of a manager's mutable state.
///
/// Every change (a network result, a real-time event, a call from the app) is
/// applied here: first the store transaction, then the events it causes. Network
/// calls run outside the actor's critical sections (across `await`s), so after each
/// one the engine checks that what it is about to change still exists and that the
/// connection it relied on was not broken meanwhile.
actor SyncEngine {
    nonisolated let store: ChatStore
    let service: any ChatService
    let options: SyncManagerOptions
    let userId: String
    var logger: Logger { options.logger }
    /// The current time, from the injected clock of the options.
    var now: Int64 { options.currentTime() }

    private(set) var isClosed = false
    /// Running or paused, the connection's state, its epoch and subscription.
    private(set) var connection = ConnectionTracker()
    private var eventsTask: Task<Void, Never>?
    /// The current subscription's events not handled yet.
    private(set) var eventInbox: ServiceEventInbox?
    /// A test holds the drain to queue a burst behind a busy engine (see ``holdEventDrain()``).
    var eventDrainHeld = false
    var isRunning: Bool { connection.isRunning }
    var connectionState: ConnectionState { connection.state }
    /// See ``ConnectionTracker/epoch``: a result of an older epoch never proves a channel live.
    var epoch: Int { connection.epoch }

    var views: [Int: MessageView] = [:]
    var nextViewId = 0
    /// The open channel lists and how far the channel change logs are applied.
    var channelLists = ChannelListSync()
    var channels: [String: ChannelSyncState] = [:]
    /// Channels with a catch-up running, each with the epoch it runs in, so only one runs
    /// per channel and connection: one left from a lost connection stops at its next
    /// request and does not keep the next connection's from running.
    var catchingUp: [String: CatchUpClaim] = [:]
    /// The outbox's in-memory facts, beside its table.
    var outbox = OutboxBookkeeping()
    /// The user's queued edits and deletions, laid over every message a view shows.
    let pendingWrites = PendingWrites()
    var observers = MessageObservers()
    /// Told the request id of every message that enters the failed state, whether or not
    /// a collection shows its channel: the soak uses it to know which messages may leave
    /// their lane's order. `nil` in apps.
    var failureWitness: (@Sendable (String) -> Void)?
    /// Told every edit or deletion that fails for good, whether or not a collection shows
    /// its channel (the soak's and model tests' view of them). `nil` in apps.
    var operationFailureWitness: (@Sendable (OutboxOperation) -> Void)?
    /// Told each channel whose cached history (and record of messages synced lately) is
    /// dropped: a refused change-log token, a channel gone, or every channel (`nil`) on
    /// ``clearCache()``. The soak uses it to know which messages `message(reqId:)` may
    /// have forgotten. `nil` in apps.
    var historyDropWitness: (@Sendable (String?) -> Void)?
    /// Told the request id of every failed message removed for the failed list's limits
    /// (its count or its retention), whether or not a collection shows its channel: the
    /// soak closes views, and would not otherwise know which failed messages may be gone.
    /// `nil` in apps.
    var limitDropWitness: (@Sendable (String) -> Void)?
    /// Tracked background tasks, and the listeners told when one ends or an event is
    /// handled (see `activitySignals()`).
    var background = BackgroundWork()
    /// When the cache is next due for trimming to its capacity.
    var trimming: CacheTrimming
    /// Messages at most one eviction step removes: one short transaction, so that a fetch
    /// waiting for the engine never waits for more than that. Tests make it small, so that
    /// trims take many steps and views open, fetch and move between them.
    var evictionStepSize = 2_000
    /// The most events a collection's first stream holds before the app reads it (see
    /// ``FirstEventStream``); tests make it small so that their schedules reach it.
    var unreadEventLimit = CollectionEventOutlet.earlyEventLimit
    /// How many times a refused change-log token made a channel's cached history go
    /// (read by tests, which cannot tell when a reconnect does it).
    var historyResetCount = 0
    /// When each channel's cached history was last dropped: a page asked before that is not stored.
    var historyDrops = HistoryDrops()
    /// Pages of message change logs applied since the manager opened whose token moved on:
    /// a pass of the reconnect sync that applied one got further (``SyncReach``).
    var changeLogPagesApplied = 0
    /// Each channel's requests in flight (only channels with one).
    var inFlight: [String: RequestsInFlight] = [:]
    /// The sync batch stored last, which the fill reading it next takes from memory.
    var storedBatch: StoredBatch?
    /// How many cache reads ``storedBatch`` answered (read by tests, which check that the
    /// path they try to break is taken at all).
    var storedBatchAnswers = 0
    /// How many stretches of new messages that arrived together were applied as one
    /// (``applyReceived(_:)-([Message])``; read by tests, like ``storedBatchAnswers``).
    var liveStretchesApplied = 0
    /// Awaited after each eviction step with its channel and how many messages it removed,
    /// in place of a plain yield: a test opens and fetches views there, between two steps.
    /// `nil` in apps.
    var evictionStepWitness: (@Sendable (_ channelURL: String, _ removed: Int) async -> Void)?
    /// Told of each try of a view's owed newest page as it starts, with the view's id, the
    /// connection's epoch and whether the try before it reached further back (the count of
    /// tries then starts over): a generator counts each connection's tries of each view,
    /// which no service wrapper can tell apart (the views' fills ask the same pages). `nil` in apps.
    var newestPageTryWitness: (@Sendable (_ viewId: Int, _ epoch: Int, _ afterProgress: Bool) -> Void)?
    /// When the reconnect sync of the current connection runs, and its one chain of retries.
    var syncPasses = SyncPassSchedule()
    /// Told when a pass of the reconnect sync starts (`true`) and ends (`false`), with its
    /// connection's epoch: a generator checks that one connection's passes never overlap,
    /// without trusting ``syncPasses``. `nil` in apps.
    var syncPassWitness: (@Sendable (_ epoch: Int, _ starts: Bool) -> Void)?

    init(store: ChatStore, service: any ChatService, options: SyncManagerOptions, userId: String) throws {
        self.store = store
        self.service = service
        self.options = options
        self.userId = userId
        self.trimming = CacheTrimming(capacity: options.messageStoreCapacity)
        // A relaunch: what was in flight, and what the host appended, is asked of the
        // service by request id before anything else is sent (Guarantees: Relaunch).
        outbox.awaitingReconciliation = Set(
            try store.outboxEntries(states: [.created, .uploading, .syncing])
                .filter { $0.message.syncState != .created || $0.origin == .host }
                .map(\.reqId))
        pendingWrites.load(try store.operations())
        outbox.restoreSynced(try store.restoreSyncedLately())
    }

    /// Throws ``SyncManagerError/Code/closed`` once the manager is closed.
    func checkOpen() throws {
        if isClosed { throw SyncManagerError(.closed, "the SyncManager is closed") }
    }

    /// Whether the real-time stream is up: only then can a page prove a channel live.
    var isOnline: Bool { isRunning && !isClosed && connectionState == .online }

    /// Whether requests may be made: running, and the service has not reported itself
    /// offline (while the real-time stream is still connecting, requests work).
    var canReachService: Bool { isRunning && !isClosed && connectionState != .offline }

    // MARK: - Lifecycle

    func resume() async {
        guard !isClosed, !isRunning else { return }
        let current = connection.start()
        do { try enforceFailedLimits() } catch { logger.error("could not apply failed-message limits: \(error)") }
        if !outbox.restoredAutomaticResends {
            outbox.restoredAutomaticResends = true
            restoreAutomaticResends()
        }
        let stream = await service.events()
        var events = stream.makeAsyncIterator()
        // A subscription starts with the connection state: apply it before returning,
        // so that a fetch right after `resumeSync()` knows whether it may go online.
        if let first = await events.next() { handle(first, from: current) }
        guard isRunning, !isClosed, connection.subscription == current else { return }  // paused or closed meanwhile
        // The loop holds the engine weakly so that a forgotten manager can go away. It
        // only puts events in the inbox; the engine takes them in batches.
        let inbox = ServiceEventInbox()
        eventInbox = inbox
        eventsTask = Task { [weak self, events] in
            var events = events
            while let event = await events.next() {
                guard let self else { return }
                if inbox.put(event) { Task { await self.handleEvents(in: inbox, from: current) } }
            }
        }
    }

    func pause() {
        guard isRunning else { return }
        connection.stop()
        eventsTask?.cancel()
        eventsTask = nil
        connectionLost(to: .offline)
    }

    func close() {
        guard !isClosed else { return }
        pause()
        isClosed = true
        background.cancelAll()
        for view in views.values { view.outlet.finish() }
        views.removeAll()
        storedBatch = nil
        channelLists.finishAll()
        observers.finishAll()
        store.close()
    }

    func clearCache() throws {
        try checkOpen()
        try store.clearCache()
        forgetSyncedLately(droppedWithHistoryOf: nil)
        trimming.cacheCleared()
        channels.removeAll()
        historyDrops.droppedEverything()
        channelLists.changeLogsAreDue()
        // As when a change-log token is refused (see `MessageView.historyDropped`).
        for view in views.values { view.historyDropped() }
        // As after a refused channel token, so that an app paging on scrolling is not left
        // with no row to scroll to.
        clearListsOwingTheirFirstPage()
        // Online, their channels are proven live now: in a quiet channel nothing else would
        // (no next message), and the emptied screen would wait for a reconnect. A view whose
        // fetch is out is fresh once it ends (see `fetchEnded`). A catch-up of the channel
        // already running goes on instead: the page it asked for before the clear is not
        // stored, and it asks again (see `catchUp`).
        for channelURL in Set(views.values.filter(\.isFresh).map(\.channelURL)).sorted() { startCatchUp(channelURL) }
    }

    // MARK: - Background work

    /// Runs `work` as a tracked task, so that close can cancel it and tests can wait for it.
    func runInBackground(_ work: @escaping @Sendable (SyncEngine) async -> Void) {
        let id = background.reserveId()
        let task = Task { [weak self] in
            guard let self else { return }
            await work(self)
            await self.finishBackgroundTask(id)
        }
        background.track(task, id: id)
    }

    var backgroundTaskCount: Int { background.count }

    private func finishBackgroundTask(_ id: Int) { background.finish(id) }

    // MARK: - Service events

    /// Handles a batch of the inbox's events in one turn, and schedules the next batch.
    /// Consecutive new messages of one channel are applied together (see
    /// `SyncEngine+LiveRuns.swift`): a burst in a busy channel costs one transaction
    /// and one insertion per view, not one per message.
    func handleEvents(in inbox: ServiceEventInbox, from subscription: Int) {
        guard !eventDrainHeld else { return }  // the test that holds it drains on release
        let (events, more) = inbox.take()
        var run: [Message] = []
        for event in events {
            guard case .messageReceived(let message) = event else {
                applyReceivedRun(&run)
                handle(event, from: subscription)
                continue
            }
            if let first = run.first, first.channelURL != message.channelURL { applyReceivedRun(&run) }
            // A late event of an older subscription, or after pause or close, is dropped.
            if connection.admit(eventOf: subscription) { run.append(message) }
        }
        applyReceivedRun(&run)
        if more { Task { self.handleEvents(in: inbox, from: subscription) } }
    }

    /// Applies and empties a run of admitted new messages of one channel.
    private func applyReceivedRun(_ run: inout [Message]) {
        guard !run.isEmpty else { return }
        defer {
            run.removeAll(keepingCapacity: true)
            signalActivity()
        }
        guard isRunning, !isClosed else { return }
        if run.count == 1 { applyReceived(run[0]) } else { applyReceived(run) }
    }

    private func handle(_ event: ServiceEvent, from subscription: Int) {
        // A late event of an older subscription, or after pause or close, is dropped, not applied.
        guard connection.admit(eventOf: subscription) else { return }
        defer { signalActivity() }
        guard isRunning, !isClosed else { return }
        switch event {
        case .connectionChanged(let state):
            guard state != connectionState else { return }
            logger.debug("connection \(connectionState) -> \(state)")
            if state == .online {
                connection.comeOnline()
                uncoverTheCacheOnceOnline()
                let connected = epoch
                runInBackground { engine in await engine.syncAfterComingOnline(epoch: connected) }
            } else {
                connectionLost(to: state)
            }
        case .messageReceived(let message):
            applyReceived(message)
        case .messageUpdated(let message):
            applyUpdated([message])
        case .messageDeleted(let channelURL, let messageId):
            applyDeleted(channelURL: channelURL, messageIds: [messageId])
        case .channelChanged(let channel):
            applyChannelChanged(channel)
        case .channelRemoved(let channelURL):
            applyChannelRemoved(channelURL)
        }
    }

    /// The real-time stream is broken: nothing is live any more.
    private func connectionLost(to state: ConnectionState) {
        connection.lose(to: state)
        for url in channels.keys { channels[url]?.connectionLost() }
        // Sent messages whose echo will not come now leave the pending and failed lists;
        // the next sync brings them to the succeeded list.
        for reqId in Array(outbox.awaitingEcho.keys) { stopAwaitingEcho(reqId) }
        coverTheCacheWhileAway()
    }
}
