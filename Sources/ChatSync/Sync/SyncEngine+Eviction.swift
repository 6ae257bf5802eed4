// MARK: - Eviction: the cache keeps about `messageStoreCapacity` succeeded messages

extension SyncEngine {
    /// Messages at most one eviction step removes: one short transaction, so that a
    /// fetch waiting for the engine never waits for more than that.
    static let evictionStepSize = 2_000

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

    /// A view closed: what it protected may go, if the cache is over its capacity.
    func trimAfterViewClosed() {
        if trimming.mayBeOver, trimming.begin() { runTrim() }
    }

    private func runTrim() {
        runInBackground { engine in await engine.trimCache() }
    }

    /// Brings the cache down to its capacity in bounded steps, then gives free pages back.
    private func trimCache() async {
        guard let capacity = options.messageStoreCapacity else { return }
        var remaining: Int?
        defer { if trimming.finish(remaining: remaining), !isClosed, trimming.begin() { runTrim() } }
        do {
            // Counting scans the cache, so most trims trust the running estimate (an upper
            // bound) and take their channels from the small tables; every eighth counts,
            // and so finds rows outside every range too.
            let census = try await census(exact: trimming.countsExactly)
            var total = census.total ?? trimming.estimate
            // Down to half the slack below the capacity, so that trims come in fewer, larger steps.
            let target = capacity - trimming.slack / 2
            remaining = total
            // Least recently viewed first; channels never viewed before all others.
            let order = census.channels.sorted { (census.viewed[$0] ?? 0, $0) < (census.viewed[$1] ?? 0, $1) }
            for pass in EvictionPass.allCases {
                for channelURL in order {
                    for (end, limit) in try targets(of: channelURL, in: pass) {
                        while total > target {
                            guard !isClosed else { return }
                            let wanted = min(Self.evictionStepSize, total - target)
                            let removed = try evictStep(channelURL, from: end, count: wanted, limit: limit)
                            total -= removed
                            remaining = total
                            await Task.yield()  // let fetches and events in between steps
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

    /// Where a pass may take a channel's messages from: which end, and the key it must not
    /// reach (exclusive). Read at each step, as views
    /// open and move between steps.
    private func targets(of channelURL: String, in pass: EvictionPass) throws -> [(HistoryEnd, MessageKey)] {
        let open = views(of: channelURL)
        switch pass {
        case .farEndsOfClosedChannels:
            // Below the newest batch, which a first page would fetch again.
            guard open.isEmpty, let tail = try store.newestKey(channelURL: channelURL, skipping: options.syncBatchSize - 1) else {
                return []
            }
            return [(.oldest, tail)]
        case .closedChannels:
            return open.isEmpty ? [(.oldest, .max)] : []
        case .beyondOpenWindows:
            guard !open.isEmpty else { return [] }
            var targets: [(HistoryEnd, MessageKey)] = []
            // A view that has not delivered yet reads around its viewpoint: it protects all.
            let lowers = open.map(\.lowerBound)
            if !lowers.contains(nil), let floor = lowers.compactMap({ $0 }).min(), floor > .min {
                targets.append((.oldest, floor))
            }
            let uppers = open.map { $0.reachedNewest ? nil : $0.upperBound }
            if !uppers.contains(nil), let ceiling = uppers.compactMap({ $0 }).max(), ceiling < .max {
                targets.append((.newest, ceiling))
            }
            return targets
        }
    }

    /// One eviction step, in one transaction; the engine's view of the channel's ranges
    /// follows. A live edge whose range is gone is forgotten: the next fetch proves it again.
    private func evictStep(_ channelURL: String, from end: HistoryEnd, count: Int, limit: MessageKey) throws -> Int {
        let step = try store.evict(channelURL: channelURL, from: end, count: count, limit: limit, chunks: chunks(of: channelURL))
        channels[channelURL, default: ChannelSyncState()].chunks = step.chunks
        if let newest = channels[channelURL]?.newestKnown, !step.chunks.contains(where: { $0.contains(newest) }) {
            channels[channelURL]?.liveEdge = nil
            channels[channelURL]?.unprovenNewest = nil
        }
        return step.removed
    }

    /// The channel is being viewed: it is evicted last among closed channels.
    func noteViewed(_ channelURL: String) {
        guard options.messageStoreCapacity != nil else { return }
        do { try store.noteViewed(channelURL) } catch { logger.warning("could not note that \(channelURL) was viewed: \(error)") }
    }
}
