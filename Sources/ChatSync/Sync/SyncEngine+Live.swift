// MARK: - Live updates, change logs, catch-up

extension SyncEngine {
    /// Whether `key` lies inside one of the channel's complete ranges.
    func isCached(_ key: MessageKey, in channelURL: String) throws -> Bool {
        try chunks(of: channelURL).contains { $0.contains(key) }
    }

    /// The channel is complete up to `edge` and nothing newer exists: from now on
    /// real-time messages extend it. Views that follow the newest messages get what
    /// they are missing.
    func goLive(_ channelURL: String, at edge: MessageKey) throws {
        var edge = max(edge, channels[channelURL]?.liveEdge ?? edge)
        if let newest = try store.newestMessage(channelURL: channelURL), newest.sortKey > edge {
            // Real-time messages that arrived while the request was in flight are cached past the edge.
            try storeBatch([], completing: Chunk(channelURL: channelURL, start: edge, end: newest.sortKey))
            edge = newest.sortKey
        }
        channels[channelURL, default: ChannelSyncState()].liveEdge = edge
        try pumpLive(channelURL)
    }

    /// Brings every view that follows the channel's newest messages up to the live edge.
    func pumpLive(_ channelURL: String) throws {
        guard let live = channels[channelURL]?.liveEdge else { return }
        for view in views(of: channelURL) where view.reachedNewest {
            var from = view.upperBound ?? view.viewpointKey
            while from < live {
                let rows = try store.page(
                    channelURL: channelURL, direction: .newer, from: from, inclusive: false, bound: live,
                    limit: view.capacity, filter: view.filter)
                if rows.isEmpty { break }
                view.insert(rows, growing: .next)
                from = rows[rows.count - 1].sortKey
                if rows.count < view.capacity { break }
            }
            view.upperBound = max(view.upperBound ?? live, live)
        }
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
                } else if admitting, view.filter.matches(message), view.covers(message.sortKey),
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
        guard !channelURL.isEmpty, message.messageId > 0 else {
            logger.warning("ignoring a real-time message without a channel or id")
            return
        }
        var received = message
        received.syncState = .synced
        do {
            if let live = channels[channelURL]?.liveEdge, received.sortKey > live {
                try storeBatch([received], completing: Chunk(channelURL: channelURL, start: live, end: received.sortKey))
                channels[channelURL]?.liveEdge = received.sortKey
            } else {
                // Not provably contiguous: cached for later syncs to count, but no range claims it yet.
                try store.upsertMessages([received])
            }
            let cached = try isCached(received.sortKey, in: channelURL)
            for view in views(of: channelURL) where view.filter.matches(received) {
                if cached, view.covers(received.sortKey) { view.insert([received], growing: .next) }
                if received.senderId != userId { view.emit(.newMessage(received)) }
            }
        } catch {
            logger.error("could not store a real-time message: \(error)")
        }
    }

    func applyUpdated(_ messages: [Message]) {
        for message in messages {
            do {
                guard try store.message(channelURL: message.channelURL, messageId: message.messageId) != nil else { continue }
                var updated = message
                updated.syncState = .synced
                try store.upsertMessages([updated])
                refreshViews(message.channelURL, with: [updated])
            } catch {
                logger.error("could not apply an update: \(error)")
            }
        }
    }

    func applyDeleted(channelURL: String, messageIds: [Int64]) {
        do {
            try store.write { db in
                for id in messageIds { _ = try ChatStore.deleteMessage(channelURL: channelURL, messageId: id, in: db) }
            }
        } catch {
            logger.error("could not apply a deletion: \(error)")
        }
        for view in views(of: channelURL) { view.remove(messageIds: Set(messageIds)) }
    }

    func applyChannelChanged(_ channel: Channel) {
        do { try store.upsertChannels([channel]) } catch { logger.error("could not store a channel: \(error)") }
        for view in views(of: channel.channelURL) { view.emit(.channelUpdated(channel)) }
    }

    func applyChannelRemoved(_ channelURL: String) {
        do { try store.deleteChannel(channelURL) } catch { logger.error("could not drop a channel: \(error)") }
        chunkCache[channelURL] = nil
        channels[channelURL] = nil
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
        let refreshed = try store.write { db -> [Message] in
            // Only messages the cache holds are refreshed; the others arrive with later syncs.
            let held = try updated.filter { try ChatStore.message(channelURL: channelURL, messageId: $0.messageId, in: db) != nil }
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
    /// newest messages catch up from the newest chunk's edge.
    func reconnect() async {
        let channelURLs = Set(views.values.map(\.channelURL)).sorted()
        for channelURL in channelURLs {
            guard isOnline else { return }
            do {
                guard try await prepareChannel(channelURL) else { continue }
                if views(of: channelURL).contains(where: \.reachedNewest) { try await catchUp(channelURL) }
            } catch {
                logger.warning("sync of \(channelURL) after reconnecting failed: \(error)")
            }
        }
    }

    /// Syncs forward from the newest chunk's edge until the channel is live, unless
    /// more than `hugeGapThreshold` messages are missing: then the views that were
    /// following the newest messages are told of a huge gap instead.
    private func catchUp(_ channelURL: String) async throws {
        let epochAtStart = epoch
        var fetched = 0
        while isOnline, epoch == epochAtStart, channels[channelURL]?.liveEdge == nil {
            guard let edge = try chunks(of: channelURL).map(\.end).max() else { return }
            let query = MessageQuery(
                channelURL: channelURL, timestamp: edge.createdAt, anchorMessageId: edge.messageId, prevLimit: 0,
                nextLimit: min(options.syncBatchSize, max(1, options.hugeGapThreshold + 1 - fetched)), inclusive: false)
            guard let page = try await request({ try await $0.fetchMessages(query) }) else { return }
            guard !isClosed, epoch == epochAtStart else { return }
            fetched += page.messages.filter { $0.sortKey > edge }.count
            try applyPage(page, for: query, mayGoLive: isOnline)
            if !page.hasNext { return }
            if fetched > options.hugeGapThreshold {
                for view in views(of: channelURL) where view.reachedNewest {
                    view.reachedNewest = false
                    view.emit(.hugeGapDetected)
                }
                return
            }
        }
    }
}
