// MARK: - Catching views up to the live edge, and proving a channel live

extension SyncEngine {

    /// Catches up, in the background, the views of a channel that reached its newest
    /// messages but do not follow the live edge (yet). Does nothing offline or when a
    /// catch-up of that channel already runs: that one stands in for this request, and
    /// takes on whether it came from a real-time message (`byArrival`) or not (see
    /// ``CatchUpClaim``; a reviewer found a clear's request lost its chain otherwise).
    func startCatchUp(_ channelURL: String, byArrival: Bool = false) {
        guard let connection = claimCatchUp(channelURL, byArrival: byArrival) else {
            if !byArrival, catchingUp[channelURL]?.epoch == epoch { catchingUp[channelURL]?.onlyArrivals = false }
            return
        }
        runInBackground { engine in await engine.runCatchUp(channelURL, epoch: connection) }
    }

    /// Marks the channel as being caught up in the current connection and answers that
    /// connection's epoch, or `nil` offline or when this connection catches it up already
    /// (one left from a lost connection does not count: the new one runs beside it).
    /// The caller runs ``catchUp(_:epoch:)`` and then ``endCatchUp(_:epoch:)``.
    func claimCatchUp(_ channelURL: String, byArrival: Bool = false) -> Int? {
        let connection = epoch
        guard isOnline, catchingUp[channelURL]?.epoch != connection else { return nil }
        catchingUp[channelURL] = CatchUpClaim(epoch: connection, onlyArrivals: byArrival)
        return connection
    }

    /// A catch-up started in the connection `epoch`: its retry is asked for under that
    /// epoch, the one it ran in (before, the epoch was read when the task ran, a hop
    /// before the catch-up read its own).
    /// A failure asked only by real-time messages joins the chain of retries (see
    /// ``SyncPassSchedule/joinChain(epoch:)``); one the app asked for earns a chain of its
    /// own, as a fetch does.
    private func runCatchUp(_ channelURL: String, epoch connection: Int) async {
        var complete = true
        do { complete = try await catchUp(channelURL, epoch: connection) } catch { logCatchUpFailure(channelURL, error) }
        let onlyArrivals = endCatchUp(channelURL, epoch: connection)
        guard !complete else { return }
        if onlyArrivals, epoch == connection, syncPasses.joinChain(epoch: connection) { return }
        scheduleSyncRetry(attempt: 0, epoch: connection)
    }

    /// The catch-up of the connection `epoch` ended; a later connection's, running
    /// meanwhile, goes on. Answers whether only real-time messages asked for it.
    @discardableResult
    func endCatchUp(_ channelURL: String, epoch connection: Int) -> Bool {
        guard let claim = catchingUp[channelURL], claim.epoch == connection else { return false }
        catchingUp[channelURL] = nil
        return claim.onlyArrivals
    }

    /// Asks for the channel's messages so that, over an unbroken connection, the channel
    /// goes live (and its fresh views with it): the newest page, or, once real-time
    /// messages reached fresh views, forward from the first of them, a page per call.
    /// Answers `false` when the service did not answer or the page proved nothing new, and
    /// `true` when the channel's history was dropped while the page was out (it is asked again).
    func proveLive(_ channelURL: String, epoch epochAtStart: Int) async throws -> Bool {
        let query = try provingQuery(channelURL)
        let asked = historyDrops.mark(channelURL)
        return try await whileProvingLive(channelURL) {
            guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed, epoch == epochAtStart
            else { return false }
            // Asked before the channel's history was dropped (a clear, a refused token): not stored; asked again.
            guard try applyPage(page, for: query, mayGoLive: isOnline, askedAt: asked) else { return true }
            if channels[channelURL]?.liveEdge != nil { return true }
            // Forward from the fresh views' first message: on to the next page, if this one
            // brought any (one that brought none would be asked again for ever).
            guard query.prevLimit == 0, !page.messages.isEmpty else { return false }
            channels[channelURL]?.freshArrivalsFetched += page.messages.count
            return true
        }
    }

    /// The request that proves the channel live (see ``proveLive(_:epoch:)``). Past the huge
    /// gap threshold the fresh views are told of a gap, and the newest page is asked for.
    private func provingQuery(_ channelURL: String) throws -> MessageQuery {
        let batch = options.syncBatchSize
        let newestPage = MessageQuery(channelURL: channelURL, timestamp: .max, anchorMessageId: .max, prevLimit: batch, nextLimit: 1)
        guard let since = channels[channelURL]?.freshArrivalsSince else { return newestPage }
        guard channels[channelURL]?.freshArrivalsFetched ?? 0 <= options.hugeGapThreshold else {
            channels[channelURL]?.forgetFreshArrivals()
            for view in views(of: channelURL) where view.isFresh { view.emit(.hugeGapDetected) }
            return newestPage
        }
        guard let fetched = try chunks(of: channelURL).first(where: { $0.contains(since) }) else {
            return MessageQuery(
                channelURL: channelURL, timestamp: since.createdAt, anchorMessageId: since.messageId, prevLimit: 0, nextLimit: batch)
        }
        return MessageQuery(
            channelURL: channelURL, timestamp: fetched.end.createdAt, anchorMessageId: fetched.end.messageId, prevLimit: 0,
            nextLimit: batch, inclusive: false)
    }

    func logCatchUpFailure(_ channelURL: String, _ error: any Error) {
        logger.warning("catching up \(channelURL) failed: \(error)")
    }

    /// Syncs forward, for each view that reached the newest messages but no longer
    /// follows the live edge, from the end of its chunk until the channel is live and
    /// the view joined to it, unless more than `hugeGapThreshold` messages are
    /// missing: then that view is told of a huge gap instead. Answers `false` when the
    /// service did not answer, or the connection `epoch` it was started for is gone.
    @discardableResult
    func catchUp(_ channelURL: String, epoch epochAtStart: Int) async throws -> Bool {
        guard epoch == epochAtStart, isOnline else { return false }
        // Change logs first: views are about to be filled from the cache (Guarantees: Live updates and reconnect).
        guard try await applyChangeLogsIfDue(channelURL) else { return false }
        while isOnline, epoch == epochAtStart {
            let loose = try views(of: channelURL).filter { try $0.reachedNewest && !isFollowingLive($0) }
            guard let view = loose.first else {
                if channels[channelURL]?.liveEdge == nil, views(of: channelURL).contains(where: \.isFresh) {
                    guard try await proveLive(channelURL, epoch: epochAtStart) else { return false }
                    continue
                }
                try pumpLive(channelURL)
                return true
            }
            let upper = view.upperBound ?? view.viewpointKey
            guard let chunk = try chunks(of: channelURL).first(where: { $0.contains(upper) }) else {
                view.bounds.stopFollowing()  // its range is no longer cached: it cannot follow
                continue
            }
            let edge = chunk.end
            let fetched = view.caughtUp.messages(epoch: epochAtStart, generation: view.generation)
            let query = MessageQuery(
                channelURL: channelURL, timestamp: edge.createdAt, anchorMessageId: edge.messageId, prevLimit: 0,
                nextLimit: min(options.syncBatchSize, max(1, options.hugeGapThreshold + 1 - fetched)),
                inclusive: false)
            let asked = historyDrops.mark(channelURL)
            let answer: MessagePage? = try await whileProvingLive(channelURL) {
                // Catch-up runs only while online, in one epoch.
                guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed, epoch == epochAtStart,
                    try applyPage(page, for: query, mayGoLive: isOnline, askedAt: asked)
                else { return nil }
                return page
            }
            guard let page = answer else {
                // The channel's history was dropped while the page was out (a clear): the
                // views stand elsewhere now, so the loop looks again rather than end short.
                if historyDrops.mark(channelURL) != asked, !isClosed, epoch == epochAtStart { continue }
                return false
            }
            let gained = page.messages.filter { $0.sortKey > edge }.count
            if gained == 0, try !isFollowingLive(view) {
                // Nothing past the edge, yet the view is still not joined to the live edge: the
                // channel's state contradicts the service (an earlier malformed answer, such as a
                // message dated in the future). Asking again at once would spin; the retry with
                // backoff asks later, a bounded number of times.
                return false
            }
            // More than the threshold missing is a huge gap, whether or not more follow:
            // the requests ask at most threshold + 1, so exactly that many is one too.
            // Counted over the connection's tries: one cut short does not start it over.
            if view.caughtUp.add(gained, epoch: epochAtStart, generation: view.generation) > options.hugeGapThreshold {
                try reportHugeGap(to: view, andThoseIn: chunk, among: loose)
            }
        }
        return false  // offline, or a new connection took over
    }

    /// Tells `view`, and the other loose views whose range lies in the same chunk, that
    /// too many messages separate them from the newest: they stop following it.
    private func reportHugeGap(to view: MessageView, andThoseIn chunk: Chunk, among loose: [MessageView]) throws {
        let current = try chunks(of: view.channelURL)
        let sameChunk = loose.filter { other in
            let start = current.first { $0.contains(other.upperBound ?? other.viewpointKey) }?.start
            return other !== view && start == chunk.start
        }
        for gapped in [view] + sameChunk {
            gapped.bounds.stopFollowing()
            gapped.emit(.hugeGapDetected)
        }
    }
}
