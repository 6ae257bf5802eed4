// MARK: - Fetching succeeded messages

extension SyncEngine {
    /// Delivers up to `limit` messages in `direction`: from the cache inside chunks,
    /// and where the cache falls short, from the service in batches that are stored
    /// first and then read back. Answers `hasMore`.
    func fetchSucceeded(_ id: Int, _ direction: Direction) async throws -> Bool {
        let view = try view(id)
        view.outlet.appActed()
        guard !view.fetching.contains(direction) else {
            throw SyncManagerError(.duplicatedFetch, "a \(direction) fetch is already running for this collection")
        }
        view.fetching.insert(direction)
        defer { fetchEnded(view, direction) }
        let generation = view.generation
        try await applyChangeLogsBeforeServing(view)
        return try await fillPage(of: view, direction, PageFill(generation: generation, delivered: 0))
    }

    /// A fetch of `view` ended. A view fresh now was not while it fetched (it was reset to
    /// the newest messages meanwhile: the app reset its viewpoint to `.max`, or
    /// `clearCache()` emptied it; or the fetch placed nothing): fresh views were adopted,
    /// and catch-ups started, without it. It joins a live channel at once; online, one
    /// the clear emptied proves the channel live, as the clear did for views that were not
    /// fetching. Checked at every fetch's end, not only one that began before the reset: a
    /// fetch in the other direction may end last.
    private func fetchEnded(_ view: MessageView, _ direction: Direction) {
        view.fetching.remove(direction)
        guard !isClosed, views[view.id] === view, view.isFresh else { return }
        followNewest(view.channelURL)
        if view.isFresh, view.isEmptiedByHistoryDrop { startCatchUp(view.channelURL) }
    }

    /// How a page is filled: the app's fetch starts empty; the background completion of
    /// a fresh view's newest page starts from what the view shows, stops above the
    /// newest message cached when it opened, and gives way to the app's own fetch.
    struct PageFill {
        /// The view's generation when the fill began: a viewpoint reset ends it.
        let generation: Int
        /// How many messages of the page the view already holds.
        let delivered: Int
        /// A `.previous` fill stops above this key (see ``serve(_:_:from:after:delivered:floor:)``).
        var floor: MessageKey?
        /// Whether the fill stops once the app fetches in the same direction.
        var yieldsToApp = false
    }

    /// Delivers messages in `direction` until the view holds a page: from the cache
    /// inside chunks, and where the cache falls short, from the service in batches that
    /// are stored first and then read from the cache. Answers `hasMore`.
    func fillPage(of view: MessageView, _ direction: Direction, _ fill: PageFill) async throws -> Bool {
        var delivered = fill.delivered
        var before: FillPosition?
        while delivered < view.limit {
            // Anything may have happened during the last await: stop delivering to a
            // removed or reset view.
            guard !isClosed, views[view.id] === view, view.generation == fill.generation,
                !(fill.yieldsToApp && view.fetching.contains(direction))
            else { return true }
            let anchor = view.anchor(for: direction)
            let cover = try coverage(for: view, anchor: anchor.key, direction: direction)
            // A round that moved nothing (the view's edge, the chunk it read, what it
            // delivered) would be asked again for ever: the end stays unknown instead.
            let position = FillPosition(
                anchor: anchor.key, cover: cover, delivered: delivered, newestKnown: channels[view.channelURL]?.newestKnown)
            guard position != before else { return true }
            before = position
            if let chunk = cover {
                switch try serve(view, direction, from: chunk, after: anchor, delivered: &delivered, floor: fill.floor) {
                case .pageFull: return true
                case .channelEnd: return false
                case .readOn: continue
                case .chunkEnd: break
                }
            }
            guard canReachService else { return true }  // offline: the cache is all there is, and the end is unknown
            guard try await syncStep(for: view, direction: direction, cover: cover, anchor: anchor.key) else { return true }
        }
        return true
    }

    /// Where a fill stands, to tell that a round moved it. The channel's newest known
    /// message is part of it: a request that only proves nothing newer exists moves no
    /// chunk, yet the next round then finds the channel's end.
    private struct FillPosition: Equatable {
        let anchor: MessageKey
        let cover: Chunk?
        let delivered: Int
        let newestKnown: MessageKey?
    }

    /// Applies the channel's change logs before its cache is served, once per connection
    /// (Guarantees: Live updates and reconnect): when no view was open at the reconnect
    /// nobody applied them, and the cache would serve deleted and stale messages as
    /// complete. Unanswered, the cache is served as offline and a retry applies them later.
    private func applyChangeLogsBeforeServing(_ view: MessageView) async throws {
        guard canReachService, channels[view.channelURL]?.changeLogsEpoch != epoch else { return }
        let epochAtStart = epoch
        if try await !applyChangeLogsForFetch(view.channelURL) { scheduleSyncRetry(attempt: 0, epoch: epochAtStart) }
    }

    /// Applies the channel's change logs for an app's fetch. When they met a refused token
    /// (`forgetCachedHistory`), views at the newest messages stand there
    /// again, fresh, and this fetch proves nothing for them (it may be of a view in
    /// history): the channel's catch-up starts now, as after `clearCache()`, rather than
    /// at the sync's retry, a backoff away or run out (a reviewer's finding). The sync's
    /// own passes and catch-ups go on to prove the channel live themselves.
    private func applyChangeLogsForFetch(_ channelURL: String) async throws -> Bool {
        let dropped = historyDrops.mark(channelURL)
        let applied = try await applyChangeLogsIfDue(channelURL)
        if !isClosed, historyDrops.mark(channelURL) != dropped, views(of: channelURL).contains(where: \.isFresh) {
            startCatchUp(channelURL)
        }
        return applied
    }

    /// How reading one chunk of the cache ended.
    enum ChunkRead {
        /// The view got a full page, and the chunk holds more.
        case pageFull
        /// The chunk holds more, and the page is not full yet: rows whose deletion is
        /// queued were read and stay hidden.
        case readOn
        /// The chunk ends where the channel does: nothing more in this direction.
        case channelEnd
        /// The chunk ran out before the page was full: the service must be asked.
        case chunkEnd
    }

    /// Reads the view's next rows in `direction` from inside `chunk` into the view; a
    /// `.previous` read stops above `floor` (exclusive) when one is given, and then counts
    /// as the channel's end for this read only (the view is not marked as holding the oldest).
    func serve(
        _ view: MessageView, _ direction: Direction, from chunk: Chunk, after anchor: (key: MessageKey, inclusive: Bool),
        delivered: inout Int, floor: MessageKey? = nil
    ) throws -> ChunkRead {
        // The first page of a view at `.max` read from the live chunk is the channel's
        // newest: from then on the view follows the live edge. Offline, the newest cached
        // chunk stands for the newest messages: the view follows from it, and the
        // reconnect catches it up (or reports a gap).
        let top = try newestChunk(view.channelURL) ?? (isOnline ? nil : chunks(of: view.channelURL).last)
        let atLiveTop = direction == .previous && view.viewpoint == .max && view.lowerBound == nil && top == chunk
        defer {
            if atLiveTop {
                view.bounds.reachNewest(at: chunk.end)
                if (try? isFollowingLive(view)) != true { startCatchUp(view.channelURL) }
            }
        }
        let need = view.limit - delivered  // at least 1: a full page returns before
        // Read only inside the chunk: rows past its edges may be cached, but nothing says
        // the messages between them and the chunk are.
        let (from, fromInclusive) = Self.clamp(anchor.key, anchor.inclusive, to: chunk, direction)
        let floorInChunk = floor.flatMap { direction == .previous && $0 >= chunk.start ? $0 : nil }
        // One row more than needed tells whether the chunk holds more, without a second query.
        var rows = try page(
            of: view.channelURL, direction == .previous ? .older : .newer, from: from, inclusive: fromInclusive,
            bound: direction == .previous ? floorInChunk ?? chunk.start : chunk.end, limit: need + 1, filter: view.filter)
        if let floorInChunk { rows.removeAll { $0.sortKey <= floorInChunk } }
        let chunkHasMore = rows.count > need
        if chunkHasMore {
            if direction == .previous { rows.removeFirst() } else { rows.removeLast() }
        }
        if !rows.isEmpty {
            view.insert(rows, growing: direction)
            // Move the anchor even if the view already held these rows, so the loop always progresses.
            if direction == .previous {
                view.bounds.extendLower(to: rows[0].sortKey)
            } else {
                view.bounds.extendUpper(to: rows[rows.count - 1].sortKey)
            }
            // Rows whose deletion is queued stay out of the view and fill no part of the page:
            // counted, they ended a fetch short of `limit`, even with nothing shown.
            delivered +=
                pendingWrites.isEmpty
                ? rows.count : rows.count { !pendingWrites.isBeingDeleted(channelURL: $0.channelURL, messageId: $0.messageId) }
        }
        if chunkHasMore { return delivered >= view.limit ? .pageFull : .readOn }
        if floorInChunk != nil { return .channelEnd }
        // Whether the read began at the anchor, or below an anchor the chunk does not
        // reach with the span between proven empty (the chunk reaches the live edge online).
        let readFromAnchor = anchor.key <= chunk.end || atLiveTop || (isOnline && isEnd(of: chunk, .next, view))
        // Offline, a chunk below an empty view's viewpoint stands in for its place (see
        // ``coverage(for:anchor:direction:)``): it may reach the channel's start, but
        // nothing says what lies between its end and the viewpoint, so with nothing shown
        // the end is unknown. Marked, the view said for good that no message lay at or
        // before its viewpoint (an adversarial probe; the model's offline views).
        if direction == .previous, !readFromAnchor, view.succeeded.isEmpty { return .chunkEnd }
        if isEnd(of: chunk, direction, view) {
            markExhausted(view, direction, chunk: chunk)
            return .channelEnd
        }
        if delivered >= view.limit { return .pageFull }
        // Every matching message down to the chunk's start is in the view now: the view
        // is complete down there, so a trim of the cache cannot take back what was read
        // while the service is asked for older messages (the two would take turns for
        // ever on a filter that matches nothing there, model seed 236). Not when the read
        // began below an anchor the chunk does not reach and nothing proves the span
        // between empty (offline, the newest cached chunk stands in for the viewpoint's
        // place): the view's next fetches must still start from the anchor.
        if direction == .previous, readFromAnchor {
            view.bounds.readDown(to: chunk.start, upperIfUnset: view.previousReadTop(in: chunk))
        }
        // The same going `.next`, up to the chunk's end: otherwise the trim takes the batch
        // just fetched above the view's window while the fill asks for it again, and a
        // filter matching nothing there keeps the two taking turns (the sparse-filter
        // generator). The read began at the anchor whenever the chunk holds it.
        if direction == .next, chunk.contains(anchor.key) {
            view.bounds.extendUpper(to: chunk.end)
        }
        return .chunkEnd
    }

    /// Fetches `.next` while it brings newer messages. Offline it goes on as long as the
    /// cache serves more. A round that moved the view's newest message nowhere (past
    /// what the cache holds offline, or a service that failed) ends it with the rest left
    /// to the sync's retries and the app's next fetch: before, offline it stopped after
    /// one page, and online against a failing service it asked again at once, without end.
    func fetchAllNext(_ id: Int) async throws {
        var edge = try view(id).succeeded.last?.sortKey
        while try await fetchSucceeded(id, .next) {
            guard let view = views[id], let newest = view.succeeded.last?.sortKey, newest != edge else { return }
            edge = newest
        }
    }

    // MARK: Background sync

    /// One request to the service for the range a fetch needs, stored in one
    /// transaction. Answers `false` when the service could not be reached.
    func syncStep(for view: MessageView, direction: Direction, cover: Chunk?, anchor: MessageKey) async throws -> Bool {
        let channelURL = view.channelURL
        guard try await applyChangeLogsForFetch(channelURL) else { return false }
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
        let asked = historyDrops.mark(channelURL)
        return try await whileProvingLive(channelURL) {
            guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed else { return false }
            // Answered either way: a page not stored (the history it built on was dropped)
            // is asked for again by the fetch's next round, unless that round moves nothing
            // (then the fetch ends with `hasMore`, and the app's next fetch asks).
            try applyPage(page, for: query, mayGoLive: provingEpoch == epoch && isOnline, askedAt: asked)
            return true
        }
    }

}
