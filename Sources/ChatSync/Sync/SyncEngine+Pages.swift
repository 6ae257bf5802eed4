// MARK: - Applying a page: what the service answered becomes cache, chunks and view updates

extension SyncEngine {
    /// Stores a page the service answered for `query`, with the range it proves
    /// complete, in one transaction; refreshes the views that hold its messages; and,
    /// when the page reaches the channel's newest message over an unbroken
    /// connection, makes the channel live.
    ///
    /// `askedAt` is the channel's ``HistoryDrops`` mark when the page was asked for: a page
    /// asked before the channel's history was dropped is not stored (`false` is answered).
    @discardableResult
    func applyPage(_ page: MessagePage, for query: MessageQuery, mayGoLive: Bool, askedAt: Int) throws -> Bool {
        let channelURL = query.channelURL
        guard historyDrops.mark(channelURL) == askedAt else {
            logger.debug("a page of \(channelURL) asked for before its cached history was dropped is not stored")
            return false
        }
        var messages = Self.sanitized(page.messages, channelURL: channelURL)
        let span = PageSpan(page: page, messages: messages, query: query)
        // The user's messages keep the request ids this device knows, also on the paths
        // below that store a page's messages without its range.
        messages = try withKnownReqIds(laterThanTheAnswer(messages, in: channelURL))
        guard span.start <= span.end else {
            logger.warning("ignoring a page whose range is reversed (\(span.start) > \(span.end)) in \(channelURL)")
            try store.upsertMessages(messages)
            noteCacheWrites(messages.count)
            return true
        }
        // A range that starts at the end of time proves nothing (an empty answer that still
        // claimed older messages): stored as a chunk it would become a live edge no real
        // message can reach, and a catch-up would chase it.
        guard span.start < .max else {
            logger.warning("ignoring the range of an empty page that claims older messages in \(channelURL)")
            try store.upsertMessages(messages)
            noteCacheWrites(messages.count)
            return true
        }
        try resolveOwnArrivals(&messages, in: channelURL)
        // An exclusive query stands on its anchor: the cache held it when the request left.
        let anchor = MessageKey(createdAt: query.timestamp, messageId: query.anchorMessageId ?? .max)
        let merged = try storeBatch(
            messages, completing: Chunk(channelURL: channelURL, start: span.start, end: span.end),
            vouchedEdge: query.inclusive ? nil : anchor, authoritative: span.authoritative)
        forgetRememberedAbsent(from: messages, of: span, in: channelURL)
        refreshViews(channelURL, with: messages, admitting: false, followingMoves: false)
        // The anchor was evicted meanwhile, and the page alone proves no range: a later
        // request asks again around the view's own anchor.
        guard let merged else { return true }
        try absorbHeld(channelURL, within: merged)
        if span.reachesNewest {
            // The channel's newest message, as a real-time one would be: a catch-up brings
            // what the connection missed, which channel change logs may not tell (failing).
            // (Deleted meanwhile, whichever way the engine learnt it, it left `messages`
            // above.) Not a channel the cache does not hold: a list learns of that from its
            // own logs.
            if let newest = messages.last { noteNewMessage(newest, learningOfNewChannels: false) }
            if mayGoLive {
                try goLive(channelURL, at: span.end)
            } else if channels[channelURL]?.liveEdge == nil {
                channels[channelURL, default: ChannelSyncState()].unprovenNewest = span.end
            }
        }
        return true
    }

    /// Messages of this device that sync brings back resolve their outbox entries first
    /// (those without a request id have the one this device knows by now: `applyPage`).
    private func resolveOwnArrivals(_ messages: inout [Message], in channelURL: String) throws {
        guard !outbox.awaitingEcho.isEmpty || messages.contains(where: { !$0.reqId.isEmpty }) else { return }
        let waiting = Set(try store.outboxEntries(channelURL: channelURL).map(\.reqId)).union(outbox.awaitingEcho.keys)
        for index in messages.indices where messages[index].reqId.isEmpty || waiting.contains(messages[index].reqId) {
            try resolveArrival(&messages[index])
        }
    }

    /// Stores a batch and its complete range in one transaction; answers the merged
    /// range. Rows inside `authoritative` that the batch lacks leave the cache and the views.
    ///
    /// `vouchedEdge` is an edge of `range` that the batch does not hold but the cache did
    /// when the request left (the anchor of an exclusive query, a live edge). If it was
    /// evicted since, the range shrinks to the batch's own messages, or proves nothing
    /// (`nil` is answered): a range must never claim a message the cache lacks.
    @discardableResult
    func storeBatch(
        _ messages: [Message], completing claimed: Chunk, vouchedEdge: MessageKey? = nil, authoritative: KeyRange? = nil
    ) throws -> Chunk? {
        let channelURL = claimed.channelURL
        // Also when this throws: the views then follow the cache as it stayed.
        defer { followMovedCopies(messages, in: channelURL) }
        let existing = try chunks(of: channelURL)
        noteCacheWrites(messages.count)
        let range = Self.provable(claimed, batch: messages, vouchedEdge: vouchedEdge, chunks: existing)
        // The one place chunks merge: the store records the result, the engine keeps it.
        let merged = range.map { Chunk.merging($0, into: existing) }
        let changed = merged.map { $0 != existing } ?? false
        let written = try store.applySyncBatch(
            messages, channelURL: channelURL, chunks: changed ? merged : nil, authoritative: authoritative)
        if let merged { channels[channelURL, default: ChannelSyncState()].chunks = merged }
        keep(written, of: messages, in: channelURL, span: authoritative)
        forgetRemoved(written.removed, in: channelURL)
        guard let range, let merged else { return nil }
        // A range the cache already held answers itself; a new one, what it merged into.
        guard changed else { return range }
        return merged.first { $0.contains(range.start) } ?? range
    }

    /// Keeps a batch the cache now holds as given, for the read that follows it.
    private func keep(_ written: SyncBatchWrite, of messages: [Message], in channelURL: String, span: KeyRange?) {
        guard let mark = written.verbatimAt, let span else {
            storedBatch = nil
            return
        }
        storedBatch = StoredBatch(channelURL: channelURL, span: span, messages: messages, mark: mark)
    }

    /// The rows a page read of the cache answers: from the batch stored last when it
    /// still stands for the cache there, else from the cache.
    func page(
        of channelURL: String, _ direction: PageDirection, from anchor: MessageKey, inclusive: Bool, bound: MessageKey,
        limit: Int, filter: MessageFilter
    ) throws -> [Message] {
        if let batch = storedBatch, batch.holds(channelURL) {
            if try store.changeMark() != batch.mark {
                storedBatch = nil  // it stands for nothing any more: its messages go
            } else if let rows = batch.page(
                direction: direction, from: anchor, inclusive: inclusive, bound: bound, limit: limit, filter: filter)
            {
                storedBatchAnswers += 1
                return rows
            }
        }
        return try store.page(
            channelURL: channelURL, direction: direction, from: anchor, inclusive: inclusive, bound: bound, limit: limit,
            filter: filter)
    }

    /// Messages of this device remembered as synced lately (often not cached: sent to a
    /// channel no collection showed, or evicted) that a page lacks: deleted, perhaps while
    /// the app was away, when nothing else tells of it. Before, `message(reqId:)` answered
    /// such a message as synced for good (the outbox model, seeds 127 and 151 under load).
    /// Copies remembered while a request was out are kept: its answer may predate them.
    ///
    /// Inside the span the page is the truth for, they are deleted as the cached rows it
    /// lacks are. Past its end, when it reaches the newest message, only an uncached
    /// copy's record goes: a service whose pages are not complete by key (Matrix sorts
    /// what it read in timeline order, and a federation backlog dated earlier can fill the
    /// newest page) may leave out a message that exists, which must then leave no view and
    /// mark nothing deleted for answers in flight.
    private func forgetRememberedAbsent(from messages: [Message], of span: PageSpan, in channelURL: String) {
        guard !outbox.recentlySynced.isEmpty else { return }
        let fresh = inFlight[channelURL]?.rememberedWhileAsked ?? []
        let present = Set(messages.map(\.messageId))
        func absent(within range: KeyRange) -> [Message] {
            outbox.recentlySynced.copies(in: channelURL, within: range).filter {
                !present.contains($0.messageId) && !fresh.contains($0.reqId)
            }
        }
        forgetRemoved(absent(within: span.authoritative).map(\.messageId), in: channelURL)
        guard span.reachesNewest else { return }
        let past = KeyRange(lower: span.end, lowerInclusive: false, upper: .max, upperInclusive: true)
        for copy in absent(within: past) where (try? store.message(channelURL: channelURL, messageId: copy.messageId)) == nil {
            forgetSyncedLately(copy)
        }
    }

    /// Messages a page proved deleted leave the views and are remembered as deleted.
    private func forgetRemoved(_ removed: [Int64], in channelURL: String) {
        guard !removed.isEmpty else { return }
        // Deleted on the service: another page in flight, made before, may still name them.
        rememberDeletionsForAnswersInFlight(removed, in: channelURL)
        forgetSyncedLately(channelURL: channelURL, messageIds: removed)
        for view in views(of: channelURL) { view.remove(messageIds: Set(removed)) }
    }

    /// `claimed`, or the part of it the batch proves by itself when its vouched edge is
    /// no longer inside a complete range (see ``storeBatch(_:completing:vouchedEdge:authoritative:)``).
    static func provable(_ claimed: Chunk, batch: [Message], vouchedEdge: MessageKey?, chunks: [Chunk]) -> Chunk? {
        guard let edge = vouchedEdge, claimed.start == edge || claimed.end == edge,
            !chunks.contains(where: { $0.contains(edge) })
        else { return claimed }
        // The service answered everything strictly between the edge and the far end.
        let inside = batch.map(\.sortKey).filter { claimed.contains($0) && $0 != edge }
        guard let low = inside.min(), let high = inside.max() else { return nil }
        return Chunk(
            channelURL: claimed.channelURL, start: claimed.start == edge ? low : claimed.start,
            end: claimed.end == edge ? high : claimed.end)
    }

    func chunks(of channelURL: String) throws -> [Chunk] {
        if let cached = channels[channelURL]?.chunks { return cached }
        let loaded = try store.chunks(channelURL: channelURL)
        channels[channelURL, default: ChannelSyncState()].chunks = loaded
        return loaded
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

    /// Stores the held real-time messages that a stored range now covers. A page answered
    /// before a message arrived lacks it although its range holds it (a message dated in
    /// the past); without this the range would claim to be complete without it.
    func absorbHeld(_ channelURL: String, within range: Chunk) throws {
        guard let held = channels[channelURL]?.heldForLive, !held.isEmpty else { return }
        let inside = try withKnownReqIds(held.filter { range.contains($0.sortKey) })
        guard !inside.isEmpty else { return }
        channels[channelURL]?.heldForLive.removeAll { range.contains($0.sortKey) }
        try resolveOwnUpdates(inside, in: channelURL)
        try store.upsertMessages(inside)
        noteCacheWrites(inside.count)
        refreshViews(channelURL, with: inside)
    }
}
