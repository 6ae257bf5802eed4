// MARK: - Fetching succeeded messages

extension SyncEngine {
    /// Delivers up to `limit` messages in `direction`: from the cache inside chunks,
    /// and where the cache falls short, from the service in batches that are stored
    /// first and then read back. Answers `hasMore`.
    func fetchSucceeded(_ id: Int, _ direction: Direction) async throws -> Bool {
        let view = try view(id)
        guard !view.fetching.contains(direction) else {
            throw SyncManagerError(.duplicatedFetch, "a \(direction) fetch is already running for this collection")
        }
        view.fetching.insert(direction)
        defer { view.fetching.remove(direction) }
        let generation = view.generation
        if canReachService, channels[view.channelURL]?.changeLogsEpoch != epoch {
            // The channel's change logs come first (Guarantees: Live updates and reconnect): when no view was open at the
            // reconnect nobody applied them, and the cache would serve deleted and stale
            // messages as complete. Unanswered, the cache is served as offline and the
            // retry applies them later.
            let epochAtStart = epoch
            if try await !applyChangeLogsIfDue(view.channelURL) { scheduleSyncRetry(attempt: 0, epoch: epochAtStart) }
        }
        var delivered = 0
        while true {
            // Anything may have happened during the last await: stop delivering to a
            // removed or reset view.
            guard !isClosed, views[id] === view, view.generation == generation else { return true }
            let need = view.limit - delivered  // at least 1: a full page returns below
            let (anchor, inclusive) = view.anchor(for: direction)
            let cover = try coverage(for: view, anchor: anchor, direction: direction)
            if let chunk = cover {
                // The first page of a view at `.max` read from the live chunk is the
                // channel's newest: from then on the view follows the live edge.
                // Offline, the newest cached chunk stands for the newest messages: the view
                // follows from it, and the reconnect catches it up (or reports a gap).
                let top = try newestChunk(view.channelURL) ?? (isOnline ? nil : chunks(of: view.channelURL).last)
                let atLiveTop = direction == .previous && view.viewpoint == .max && view.lowerBound == nil && top == chunk
                defer {
                    if atLiveTop {
                        view.reachedNewest = true
                        view.upperBound = max(view.upperBound ?? chunk.end, chunk.end)
                        if (try? isFollowingLive(view)) != true { startCatchUp(view.channelURL) }
                    }
                }
                // Read only inside the chunk: rows past its edges may be cached, but
                // nothing says the messages between them and the chunk are.
                let (from, fromInclusive) = Self.clamp(anchor, inclusive, to: chunk, direction)
                // One row more than needed tells whether the chunk holds more, without a second query.
                var rows = try store.page(
                    channelURL: view.channelURL, direction: direction == .previous ? .older : .newer, from: from,
                    inclusive: fromInclusive, bound: direction == .previous ? chunk.start : chunk.end,
                    limit: need + 1, filter: view.filter)
                let chunkHasMore = rows.count > need
                if chunkHasMore {
                    if direction == .previous { rows.removeFirst() } else { rows.removeLast() }
                }
                if !rows.isEmpty {
                    view.insert(rows, growing: direction)
                    // Move the anchor even if the view already held these rows, so the loop always progresses.
                    if direction == .previous {
                        view.lowerBound = min(view.lowerBound ?? rows[0].sortKey, rows[0].sortKey)
                    } else {
                        view.upperBound = max(view.upperBound ?? rows[rows.count - 1].sortKey, rows[rows.count - 1].sortKey)
                    }
                    delivered += rows.count
                }
                if chunkHasMore { return true }
                if isEnd(of: chunk, direction, view) {
                    markExhausted(view, direction, chunk: chunk)
                    return false
                }
                if delivered >= view.limit { return true }
            }
            guard canReachService else { return true }  // offline: the cache is all there is, and the end is unknown
            guard try await syncStep(for: view, direction: direction, cover: cover, anchor: anchor) else { return true }
        }
    }

    /// Fetches `.next` until the view reaches the newest message.
    func fetchAllNext(_ id: Int) async throws {
        while try await fetchSucceeded(id, .next) {
            guard views[id] != nil, canReachService else { return }
        }
    }

    // MARK: Coverage

    func chunks(of channelURL: String) throws -> [Chunk] {
        if let cached = chunkCache[channelURL] { return cached }
        let loaded = try store.chunks(channelURL: channelURL)
        chunkCache[channelURL] = loaded
        return loaded
    }

    /// Stores a batch and its complete range in one transaction; answers the merged
    /// range. Rows inside `authoritative` that the batch lacks leave the cache and the views.
    @discardableResult
    func storeBatch(_ messages: [Message], completing range: Chunk, authoritative: KeyRange? = nil) throws -> Chunk {
        let existing = try chunks(of: range.channelURL)
        let (merged, removed) = try store.applySyncBatch(messages, completing: range, authoritative: authoritative)
        chunkCache[range.channelURL] = Chunk.merging(range, into: existing)
        if !removed.isEmpty {
            for view in views(of: range.channelURL) { view.remove(messageIds: Set(removed)) }
        }
        return merged ?? range
    }

    /// The chunk a fetch may read from at `anchor`, or `nil` when the service must be asked.
    private func coverage(for view: MessageView, anchor: MessageKey, direction: Direction) throws -> Chunk? {
        let all = try chunks(of: view.channelURL)
        if let chunk = all.first(where: { $0.contains(anchor) }) { return chunk }
        if let edge = channels[view.channelURL].flatMap({ $0.liveEdge ?? $0.unprovenNewest }), anchor >= edge,
            let chunk = all.first(where: { $0.contains(edge) })
        {
            return chunk  // past the live edge nothing exists yet: the live chunk is the whole story
        }
        if !isOnline, direction == .previous, view.succeeded.isEmpty {
            // Offline with an empty view: show the newest cached page before the viewpoint.
            return all.last { $0.start <= anchor }
        }
        return nil
    }

    /// Moves an anchor that lies outside `chunk` onto its near edge (inclusive).
    static func clamp(
        _ anchor: MessageKey, _ inclusive: Bool, to chunk: Chunk, _ direction: Direction
    )
        -> (MessageKey, Bool)
    {
        switch direction {
        case .previous: anchor > chunk.end ? (chunk.end, true) : (anchor, inclusive)
        case .next: anchor < chunk.start ? (chunk.start, true) : (anchor, inclusive)
        }
    }

    /// Whether a chunk's edge in `direction` is the channel's end.
    private func isEnd(of chunk: Chunk, _ direction: Direction, _ view: MessageView) -> Bool {
        switch direction {
        case .previous: return chunk.start == .min
        case .next:
            guard let edge = channels[view.channelURL].flatMap({ $0.liveEdge ?? $0.unprovenNewest }) else { return false }
            return chunk.contains(edge)
        }
    }

    private func markExhausted(_ view: MessageView, _ direction: Direction, chunk: Chunk) {
        switch direction {
        case .previous:
            view.reachedOldest = true
            view.lowerBound = .min
            if view.upperBound == nil { view.upperBound = min(view.viewpointKey, chunk.end) }
        case .next:
            view.reachedNewest = true
            view.upperBound = max(view.upperBound ?? chunk.end, chunk.end)
            if (try? isFollowingLive(view)) != true { startCatchUp(view.channelURL) }
        }
    }

    // MARK: Background sync

    /// One request to the service for the range a fetch needs, stored in one
    /// transaction. Answers `false` when the service could not be reached.
    private func syncStep(for view: MessageView, direction: Direction, cover: Chunk?, anchor: MessageKey) async throws -> Bool {
        let channelURL = view.channelURL
        guard try await applyChangeLogsIfDue(channelURL) else { return false }
        let batch = options.syncBatchSize
        let query: MessageQuery
        if let cover {
            // Continue past the chunk's edge; the edge is cached already, and the new
            // range starts at it, so the two touch and merge.
            let edge = direction == .previous ? cover.start : cover.end
            query = MessageQuery(
                channelURL: channelURL, timestamp: edge.createdAt, anchorMessageId: edge.messageId,
                prevLimit: direction == .previous ? batch : 0, nextLimit: direction == .next ? batch : 0, inclusive: false)
        } else {
            // No chunk holds the anchor: ask one message past it the other way, so the
            // stored range contains the anchor.
            query = MessageQuery(
                channelURL: channelURL, timestamp: anchor.createdAt, anchorMessageId: anchor.messageId,
                prevLimit: direction == .previous ? batch : 1, nextLimit: direction == .next ? batch : 1)
        }
        // Only a request sent while real-time events flow can prove the channel live.
        let provingEpoch = isOnline ? epoch : nil
        return try await whileProvingLive(channelURL) {
            guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed else { return false }
            try applyPage(page, for: query, mayGoLive: provingEpoch == epoch && isOnline)
            return true
        }
    }

    /// Calls the service. A transient failure answers `nil` (and is logged); a
    /// permanent one is thrown as ``ChatServiceError``.
    func requestUnlessTransient<T: Sendable>(_ call: @Sendable (any ChatService) async throws -> T) async throws -> T? {
        do {
            return try await call(service)
        } catch {
            let classified = ChatServiceError.classify(error)
            guard classified.isTransient else { throw classified }
            // A malformed answer says something is wrong with the service: worth a warning.
            if classified.code == .badResponse {
                logger.warning("the service's answer was refused, will retry later: \(classified)")
            } else {
                logger.debug("request failed, will retry later: \(classified)")
            }
            return nil
        }
    }

    /// Stores a page the service answered for `query`, with the range it proves
    /// complete, in one transaction; refreshes the views that hold its messages; and,
    /// when the page reaches the channel's newest message over an unbroken
    /// connection, makes the channel live.
    func applyPage(_ page: MessagePage, for query: MessageQuery, mayGoLive: Bool) throws {
        let channelURL = query.channelURL
        let anchor = MessageKey(createdAt: query.timestamp, messageId: query.anchorMessageId ?? .max)
        var messages = Self.sanitized(page.messages, channelURL: channelURL)
        let start: MessageKey
        if query.prevLimit > 0 {
            start = page.hasPrev ? (messages.first { $0.sortKey <= anchor }?.sortKey ?? anchor) : .min
        } else {
            start = anchor
        }
        var end = anchor
        var reachesNewest = false
        if query.nextLimit > 0 {
            if page.hasNext, let last = messages.last, last.sortKey > anchor {
                end = last.sortKey
            } else {
                end = max(messages.last?.sortKey ?? start, start)
                reachesNewest = !page.hasNext
            }
        }
        guard start <= end else {
            logger.warning("ignoring a page whose range is reversed (\(start) > \(end)) in \(channelURL)")
            try store.upsertMessages(messages)
            return
        }
        // A range that starts at the end of time proves nothing (an empty answer that still
        // claimed older messages): stored as a chunk it would become a live edge no real
        // message can reach, and a catch-up would chase it.
        guard start < .max else {
            logger.warning("ignoring the range of an empty page that claims older messages in \(channelURL)")
            try store.upsertMessages(messages)
            return
        }
        // The page holds every message between its ends (the anchor side open when the
        // query was exclusive), so it is the truth for that span.
        let authoritative = KeyRange(
            lower: query.prevLimit > 0 ? start : anchor, lowerInclusive: query.prevLimit > 0 || query.inclusive,
            upper: query.nextLimit > 0 ? end : anchor, upperInclusive: query.nextLimit > 0 || query.inclusive)
        // Messages of this device that sync brings back resolve their outbox entries first.
        if !awaitingEcho.isEmpty || messages.contains(where: { !$0.reqId.isEmpty }) {
            let waiting = Set(try store.outboxEntries(channelURL: channelURL).map(\.reqId)).union(awaitingEcho.keys)
            for index in messages.indices where messages[index].reqId.isEmpty || waiting.contains(messages[index].reqId) {
                try resolveArrival(&messages[index])
            }
        }
        let merged = try storeBatch(
            messages, completing: Chunk(channelURL: channelURL, start: start, end: end), authoritative: authoritative)
        refreshViews(channelURL, with: messages, admitting: false)
        try absorbHeld(channelURL, within: merged)
        if reachesNewest {
            if mayGoLive {
                try goLive(channelURL, at: end)
            } else if channels[channelURL]?.liveEdge == nil {
                channels[channelURL, default: ChannelSyncState()].unprovenNewest = end
            }
        }
    }

    /// Whether a creation time can be a real message's: the two extremes are the ends of
    /// the key space (``MessageKey/min`` and ``MessageKey/max`` mark "before everything"
    /// and "after everything"), so a message dated there would be taken for an edge.
    static func isPlausibleTime(_ createdAt: Int64) -> Bool { createdAt > .min && createdAt < .max }

    /// The messages of `channelURL` only, ascending by key, each id once (the newest version),
    /// none dated at the ends of time.
    static func sanitized(_ messages: [Message], channelURL: String) -> [Message] {
        // The usual page is already clean: right channel, ascending, each id once.
        var clean = true
        for (index, message) in messages.enumerated() {
            if message.channelURL != channelURL || message.messageId <= 0 || !Self.isPlausibleTime(message.createdAt)
                || message.syncState != .synced || message.uploadProgress != nil
                || message.failure != nil || (index > 0 && !(messages[index - 1].sortKey < message.sortKey))
            {
                clean = false
                break
            }
        }
        if clean { return messages }
        var byId: [Int64: Message] = [:]
        for candidate in messages
        where candidate.channelURL == channelURL && candidate.messageId > 0 && isPlausibleTime(candidate.createdAt) {
            let message = candidate.asSynced
            if let existing = byId[message.messageId], existing.updatedAt > message.updatedAt { continue }
            byId[message.messageId] = message
        }
        return byId.values.sorted { $0.sortKey < $1.sortKey }
    }
}
