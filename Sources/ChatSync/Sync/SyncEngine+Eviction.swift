// MARK: - Eviction: the cache keeps about `messageStoreCapacity` succeeded messages

extension SyncEngine {

    /// The order in which a trim takes messages, least useful first.
    private enum EvictionPass: CaseIterable {
        /// Closed channels, least recently viewed first, down to their newest batch.
        case farEndsOfClosedChannels
        /// Open channels: what lies beyond every open view's window.
        case beyondOpenWindows
        /// Closed channels, least recently viewed first, entirely.
        case closedChannels
    }

    /// Messages were written to the cache: a trim starts in the background when due.
    func noteCacheWrites(_ count: Int) {
        if trimming.noteWritten(count) { runTrim() }
    }

    /// Starts a trim now (the manager opened on a cache that may be over its capacity).
    func trimAtOpen() {
        if trimming.begin() { runTrim() }
    }

    /// A view closed: what it protected may go, if the cache is over its capacity (after
    /// the running trim, if one runs).
    func trimAfterViewClosed() {
        if trimming.viewClosed() { runTrim() }
    }

    /// Runs a trim now and waits for it, unless one runs already (or nothing is capped):
    /// tests force a trim between a fill's rounds with it, where a background trim may
    /// or may not come. With `target`, that trim counts the cache and brings it down to
    /// `target` messages rather than the capacity's: generators put a trim's steps where
    /// they want them without first filling the cache past its capacity.
    func trimNow(to target: Int? = nil) async {
        guard trimming.begin() else { return }
        await trimCache(to: target)
    }

    private func runTrim() {
        runInBackground { engine in await engine.trimCache() }
    }

    /// Brings the cache down to its capacity in bounded steps, then gives free pages back.
    private func trimCache(to forcedTarget: Int? = nil) async {
        var remaining: Int?
        defer { if trimming.finish(remaining: remaining), !isClosed, trimming.begin() { runTrim() } }
        // A trim set off just before the manager closed may start after it did.
        guard let capacity = options.messageStoreCapacity, !isClosed else { return }
        do {
            // Counting scans the cache, so most trims trust the running estimate (an upper
            // bound) and take their channels from the small tables; every eighth counts,
            // and so finds rows outside every range too.
            let census = try await census(exact: forcedTarget != nil || trimming.countsExactly)
            var total = census.total ?? trimming.estimate
            // Down to half the slack below the capacity, so that trims come in fewer, larger steps.
            let target = forcedTarget ?? capacity - trimming.slack / 2
            remaining = total
            // Least recently viewed first; channels never viewed before all others.
            let order = census.channels.sorted { (census.viewed[$0] ?? 0, $0) < (census.viewed[$1] ?? 0, $1) }
            for pass in EvictionPass.allCases {
                for channelURL in order {
                    for end in [HistoryEnd.oldest, .newest] {
                        while total > target {
                            // Read again before every step: views open, fetch and move between steps.
                            guard !isClosed, let limit = try limit(of: channelURL, in: pass, from: end) else { break }
                            let wanted = min(evictionStepSize, total - target)
                            guard let removed = try evictStep(channelURL, from: end, count: wanted, limit: limit) else { break }
                            total -= removed
                            remaining = total
                            // Let fetches and events in between steps.
                            if let witness = evictionStepWitness { await witness(channelURL, removed) } else { await Task.yield() }
                            if removed < wanted { break }
                        }
                    }
                }
            }
            guard !isClosed else { return }
            try store.releaseFreePages(atMost: 4_096)
        } catch {
            // A manager closed mid-trim ends it; the next open trims again.
            if !isClosed { logger.error("trimming the cache failed: \(error)") }
        }
    }

    /// The channels that may hold messages and when each was viewed, and with `exact`
    /// the number of cached messages; read on a reader connection, off the engine.
    private nonisolated func census(exact: Bool) async throws -> EvictionCensus {
        try store.evictionCensus(exact: exact)
    }

    /// The key a pass must not reach (exclusive) when it takes a channel's messages from
    /// `end`, or `nil` when it may take none from there.
    private func limit(of channelURL: String, in pass: EvictionPass, from end: HistoryEnd) throws -> MessageKey? {
        let open = views(of: channelURL)
        switch (pass, end) {
        case (.farEndsOfClosedChannels, .oldest):
            // Below the newest batch, which a first page would fetch again.
            return open.isEmpty ? try store.oldestKept(channelURL: channelURL, keeping: options.syncBatchSize) : nil
        case (.closedChannels, .oldest):
            return open.isEmpty ? .max : nil
        case (.beyondOpenWindows, .oldest):
            // A view that has not delivered yet reads around its viewpoint: it protects all.
            let lowers = open.map(\.lowerBound)
            guard !open.isEmpty, !lowers.contains(nil), let floor = lowers.compactMap({ $0 }).min(), floor > .min else { return nil }
            return floor
        case (.beyondOpenWindows, .newest):
            let uppers = open.map { $0.reachedNewest ? nil : $0.upperBound }
            guard !open.isEmpty, !uppers.contains(nil), let ceiling = uppers.compactMap({ $0 }).max(), ceiling < .max else {
                return nil
            }
            return ceiling
        case (.farEndsOfClosedChannels, .newest), (.closedChannels, .newest):
            return nil
        }
    }

    /// One eviction step, in one transaction, answering how many messages it removed (`nil`:
    /// none lay short of `limit`, and no step was taken); the engine's view of the channel's
    /// ranges follows. A live edge whose range is gone is forgotten: the next fetch proves it again.
    private func evictStep(_ channelURL: String, from end: HistoryEnd, count: Int, limit: MessageKey) throws -> Int? {
        guard let step = try store.evict(channelURL: channelURL, from: end, count: count, limit: limit, chunks: chunks(of: channelURL))
        else { return nil }
        channels[channelURL, default: ChannelSyncState()].chunks = step.chunks
        if let newest = channels[channelURL]?.newestKnown, !step.chunks.contains(where: { $0.contains(newest) }) {
            channels[channelURL]?.liveEdge = nil
            channels[channelURL]?.unprovenNewest = nil
        }
        return step.removed
    }

    /// The channel is being viewed: it is evicted last among closed channels.
    ///
    /// Only a channel with cached ranges is noted: there is nothing else to rank, and a
    /// use noted of a channel with nothing cached (deleted or left, a stale link) would
    /// outlive it, since nothing removes that record but the channel's own removal.
    func noteViewed(_ channelURL: String) {
        guard options.messageStoreCapacity != nil else { return }
        let cached = channels[channelURL]?.chunks ?? (try? store.chunks(channelURL: channelURL)) ?? []
        guard !cached.isEmpty else { return }
        do { try store.noteViewed(channelURL) } catch { logger.warning("could not note that \(channelURL) was viewed: \(error)") }
    }
}
