// MARK: - Reconnect: change logs, then catching views up, with retries on the injected clock

extension SyncEngine {
    /// After a reconnect or resume: change logs first, then the views that follow the
    /// newest messages catch up from the newest chunk's edge. What the service did not
    /// answer (a transient failure) is tried again after a backoff on the injected clock.
    func reconnect() async {
        let epochAtStart = epoch
        if await !syncAfterReconnect() { scheduleSyncRetry(attempt: 0, epoch: epochAtStart) }
    }

    /// One pass of ``reconnect()``; answers whether every request of it was answered.
    private func syncAfterReconnect() async -> Bool {
        var complete = true
        do {
            // Always, lists open or not: channels cached from real-time events before any
            // token existed could never learn that they were left or deleted meanwhile.
            complete = try await applyChannelChangeLogsIfDue()
        } catch {
            logger.warning("channel change logs after reconnecting failed: \(error)")
        }
        if await !fetchOwedChannelPages() { complete = false }
        let channelURLs = Set(views.values.map(\.channelURL)).sorted()
        for channelURL in channelURLs {
            guard isOnline else { return false }
            do {
                guard try await applyChangeLogsIfDue(channelURL) else {
                    complete = false
                    continue
                }
                if views(of: channelURL).contains(where: { $0.reachedNewest || $0.isFresh }), !catchingUp.contains(channelURL) {
                    catchingUp.insert(channelURL)
                    defer { catchingUp.remove(channelURL) }
                    if try await !catchUp(channelURL) { complete = false }
                }
            } catch {
                logger.warning("sync of \(channelURL) after reconnecting failed: \(error)")
            }
        }
        return complete
    }

    /// Runs the reconnect sync again after 1, 2, 4, ... 30 s on the injected clock, at
    /// most ``syncRetryLimit`` times per connection; a later fetch, resume or reconnect
    /// starts over. Without this a lost response would leave the cache stale (missed
    /// deletions, a channel never live again) until the next connection change.
    func scheduleSyncRetry(attempt: Int, epoch epochAtFailure: Int) {
        guard isOnline, !isClosed, epoch == epochAtFailure, attempt < Self.syncRetryLimit else { return }
        let wait = Self.sleeper(options.clock, for: .seconds(min(1 << attempt, 30)))
        logger.debug("sync after reconnecting incomplete, attempt \(attempt + 1) follows")
        runInBackground { engine in
            do { try await wait() } catch { return }
            await engine.retrySync(attempt: attempt + 1, epoch: epochAtFailure)
        }
    }

    private func retrySync(attempt: Int, epoch epochAtFailure: Int) async {
        guard isOnline, !isClosed, epoch == epochAtFailure else { return }
        if await !syncAfterReconnect() { scheduleSyncRetry(attempt: attempt, epoch: epochAtFailure) }
    }

    /// How many times one connection retries an incomplete reconnect sync.
    static let syncRetryLimit = 8

    /// Syncs forward, for each view that reached the newest messages but no longer
    /// follows the live edge, from the end of its chunk until the channel is live and
    /// the view joined to it, unless more than `hugeGapThreshold` messages are
    /// missing: then that view is told of a huge gap instead. Answers `false` when the
    /// service did not answer.
    @discardableResult
    func catchUp(_ channelURL: String) async throws -> Bool {
        let epochAtStart = epoch
        // Change logs first: views are about to be filled from the cache (Guarantees: Live updates and reconnect).
        guard try await applyChangeLogsIfDue(channelURL) else { return false }
        var fetched: [Int: Int] = [:]  // by view id
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
                view.reachedNewest = false  // its range is no longer cached: it cannot follow
                continue
            }
            let edge = chunk.end
            let query = MessageQuery(
                channelURL: channelURL, timestamp: edge.createdAt, anchorMessageId: edge.messageId, prevLimit: 0,
                nextLimit: min(options.syncBatchSize, max(1, options.hugeGapThreshold + 1 - fetched[view.id, default: 0])),
                inclusive: false)
            let answer: MessagePage? = try await whileProvingLive(channelURL) {
                guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed, epoch == epochAtStart
                else { return nil }
                try applyPage(page, for: query, mayGoLive: isOnline)  // catch-up runs only while online, in one epoch
                return page
            }
            guard let page = answer else { return false }
            let gained = page.messages.filter { $0.sortKey > edge }.count
            if gained == 0, try !isFollowingLive(view) {
                // Nothing past the edge, yet the view is still not joined to the live edge: the
                // channel's state contradicts the service (an earlier malformed answer, such as a
                // message dated in the future). Asking again at once would spin; the retry with
                // backoff asks later, a bounded number of times.
                return false
            }
            fetched[view.id, default: 0] += gained
            // More than the threshold missing is a huge gap, whether or not more follow:
            // the requests ask at most threshold + 1, so exactly that many is one too.
            if fetched[view.id, default: 0] > options.hugeGapThreshold {
                view.reachedNewest = false
                view.emit(.hugeGapDetected)
                let current = try chunks(of: channelURL)
                let sameChunk = loose.filter { other in
                    let start = current.first { $0.contains(other.upperBound ?? other.viewpointKey) }?.start
                    return other !== view && start == chunk.start
                }
                for other in sameChunk {
                    other.reachedNewest = false
                    other.emit(.hugeGapDetected)
                }
            }
        }
        return false  // offline, or a new connection took over
    }
}
