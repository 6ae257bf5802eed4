// MARK: - Live updates, change logs, catch-up

extension SyncEngine {
    /// Whether `key` lies inside one of the channel's complete ranges.
    func isCached(_ key: MessageKey, in channelURL: String) throws -> Bool {
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
    private func proveLive(_ channelURL: String, epoch epochAtStart: Int) async throws -> Bool {
        let query = MessageQuery(
            channelURL: channelURL, timestamp: .max, anchorMessageId: .max, prevLimit: options.syncBatchSize, nextLimit: 1)
        return try await whileProvingLive(channelURL) {
            guard let page = try await request({ try await $0.fetchMessages(query) }), !isClosed, epoch == epochAtStart
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
                    (try? isCached(message.sortKey, in: channelURL)) == true
                {
                    insertions.append(message)
                }
            }
            view.remove(messageIds: removals)
            view.update(updates)
            if !insertions.isEmpty { view.insert(insertions, growing: .next) }
        }
    }

    // MARK: Real-time events

    func applyReceived(_ message: Message) {
        let channelURL = message.channelURL
        guard !channelURL.isEmpty, message.messageId > 0, Self.isPlausibleTime(message.createdAt) else {
            logger.warning("ignoring a real-time message without a channel, an id or a plausible time")
            return
        }
        var received = message
        received.syncState = .synced
        received.failure = nil
        received.uploadProgress = nil
        do {
            try resolveArrival(&received)
            if let live = channels[channelURL]?.liveEdge, received.sortKey > live {
                try storeBatch([received], completing: Chunk(channelURL: channelURL, start: live, end: received.sortKey))
                channels[channelURL]?.liveEdge = received.sortKey
            } else if try channels[channelURL]?.liveEdge != nil || isCached(received.sortKey, in: channelURL) {
                // Inside a range the cache holds as complete (a message dated in the past, or
                // at an edit's time): it belongs there, or views read later would skip it.
                try store.upsertMessages([received])
                // A page requested before it arrived would take it out again as missing from
                // its span: held, it is put back when that page is stored.
                if channels[channelURL]?.liveCapableRequests ?? 0 > 0 { channels[channelURL]?.heldForLive.append(received) }
            } else if channels[channelURL]?.liveCapableRequests ?? 0 > 0 {
                channels[channelURL]?.heldForLive.append(received)
            }
            // Otherwise it is not cached: nothing proves the messages before it are, and
            // a row outside every chunk could not be kept up to date. Syncs will bring it.
            noteNewMessage(received)
            if channels[channelURL]?.liveEdge == nil, views(of: channelURL).contains(where: \.isFresh) {
                startCatchUp(channelURL)  // the fresh views get this message once the channel is proven live
            }
            let cached = try isCached(received.sortKey, in: channelURL)
            for view in views(of: channelURL) where view.filter.matches(received) {
                if cached, view.covers(received.sortKey, followingLive: try isFollowingLive(view)) {
                    view.insert([received], growing: .next)
                }
                if received.senderId != userId { view.emit(.newMessage(received)) }
            }
        } catch {
            logger.error("could not store a real-time message: \(error)")
        }
    }

    func applyUpdated(_ messages: [Message]) {
        for message in messages {
            do {
                if let index = channels[message.channelURL]?.heldForLive.firstIndex(where: { $0.messageId == message.messageId }),
                    channels[message.channelURL]?.heldForLive[index].createdAt == message.createdAt
                {
                    channels[message.channelURL]?.heldForLive[index] = message
                }
                guard let cached = try store.message(channelURL: message.channelURL, messageId: message.messageId) else { continue }
                guard cached.createdAt == message.createdAt else {
                    logger.warning("ignoring an update that moves message \(message.messageId) in time")
                    continue
                }
                var updated = message
                updated.syncState = .synced
                updated.failure = nil
                updated.uploadProgress = nil
                try store.upsertMessages([updated])
                refreshViews(message.channelURL, with: [updated])
                noteChangedMessage(channelURL: message.channelURL, messageId: message.messageId, now: updated)
            } catch {
                logger.error("could not apply an update: \(error)")
            }
        }
    }

    func applyDeleted(channelURL: String, messageIds: [Int64]) {
        let deleted = Set(messageIds)
        channels[channelURL]?.heldForLive.removeAll { deleted.contains($0.messageId) }
        do {
            try store.write { db in
                for id in messageIds { _ = try ChatStore.deleteMessage(channelURL: channelURL, messageId: id, in: db) }
            }
        } catch {
            logger.error("could not apply a deletion: \(error)")
        }
        for view in views(of: channelURL) { view.remove(messageIds: Set(messageIds)) }
        for id in messageIds { noteChangedMessage(channelURL: channelURL, messageId: id, now: nil) }
    }

    func applyChannelChanged(_ channel: Channel) {
        var channel = channel
        do {
            // A real-time channel event may carry an older last message than one already seen.
            if let cached = try store.channel(channel.channelURL), let known = cached.lastMessage,
                known.sortKey > (channel.lastMessage?.sortKey ?? .min)
            {
                channel.lastMessage = known
            }
            try store.upsertChannels([channel])
        } catch {
            logger.error("could not store a channel: \(error)")
        }
        reconcileChannelViews(channelURL: channel.channelURL, now: channel)
        for view in views(of: channel.channelURL) { view.emit(.channelUpdated(channel)) }
    }

    func applyChannelRemoved(_ channelURL: String) {
        do { try store.deleteChannel(channelURL) } catch { logger.error("could not drop a channel: \(error)") }
        chunkCache[channelURL] = nil
        channels[channelURL] = nil
        reconcileChannelViews(channelURL: channelURL, now: nil)
        for view in views(of: channelURL) { view.emit(.channelRemoved(channelURL)) }
    }

    // MARK: Change logs

    /// Applies the channel's change logs since its stored token, once per connection
    /// epoch, or fetches a first token. Answers `false` when the service could not be reached.
    func prepareChannel(_ channelURL: String) async throws -> Bool {
        if channels[channelURL]?.changeLogsEpoch == epoch { return true }
        let epochAtStart = epoch
        let scope = ChatStore.messageTokenScope(channelURL)
        let limit = options.syncBatchSize
        var token = try store.syncToken(scope: scope)
        if token == nil {
            let first = try await request { try await $0.messageChangeLogs(channelURL: channelURL, token: nil, limit: limit) }
            guard let first, !isClosed else { return false }
            if try store.syncToken(scope: scope) == nil { try store.setSyncToken(first.token, scope: scope) }
        } else {
            while let since = token {
                let logs = try await request { try await $0.messageChangeLogs(channelURL: channelURL, token: since, limit: limit) }
                guard let logs, !isClosed else { return false }
                try applyChangeLogs(logs, channelURL: channelURL)
                token = logs.hasMore ? logs.token : nil
            }
        }
        if epoch == epochAtStart { channels[channelURL, default: ChannelSyncState()].changeLogsEpoch = epoch }
        return true
    }

    /// Applies one page of change logs and stores its token, in one transaction.
    private func applyChangeLogs(_ logs: MessageChangeLogs, channelURL: String) throws {
        let updated = Self.sanitized(logs.updated, channelURL: channelURL)
        let chunks = try chunks(of: channelURL)
        let refreshed = try store.write { db -> [Message] in
            // Messages the cache holds are refreshed, and so are messages new to it inside a
            // range it holds as complete (one added to history while the app was away);
            // the others arrive with later syncs. An edit never moves a message in time; a
            // copy that does is malformed and skipped.
            let held = try updated.filter { message in
                guard let cached = try ChatStore.message(channelURL: channelURL, messageId: message.messageId, in: db) else {
                    return chunks.contains { $0.contains(message.sortKey) }
                }
                return cached.createdAt == message.createdAt
            }
            try ChatStore.upsertMessages(held, in: db)
            for id in logs.deletedMessageIds { _ = try ChatStore.deleteMessage(channelURL: channelURL, messageId: id, in: db) }
            try ChatStore.setSyncToken(logs.token, scope: ChatStore.messageTokenScope(channelURL), in: db)
            return held
        }
        for view in views(of: channelURL) { view.remove(messageIds: Set(logs.deletedMessageIds)) }
        refreshViews(channelURL, with: refreshed)
    }

    // MARK: Reconnect

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
            complete = try await prepareChannelList()
        } catch {
            logger.warning("channel change logs after reconnecting failed: \(error)")
        }
        let channelURLs = Set(views.values.map(\.channelURL)).sorted()
        for channelURL in channelURLs {
            guard isOnline else { return false }
            do {
                guard try await prepareChannel(channelURL) else {
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
        // Change logs first: views are about to be filled from the cache (§3.2).
        guard try await prepareChannel(channelURL) else { return false }
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
                guard let page = try await request({ try await $0.fetchMessages(query) }), !isClosed, epoch == epochAtStart
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
