/// The engine's state of one ``ChannelCollection``.
///
/// The view holds exactly the cached channels that match its query and sort at or
/// before its boundary (the last channel its pages reached), or all of them once the
/// end is known (or, away from the service after a fetch that ran out of cached
/// channels, until the service's page after it comes). It holds only those: pages come from the cache by keyset, and each
/// change of a channel is applied to its place alone (a binary search in the loaded
/// channels), never by reading the others again.
final class ChannelView {
    let id: Int
    let query: ChannelListQuery
    /// In query order.
    private(set) var channels: [Channel] = []
    /// The loaded channels by URL, to tell a change from an arrival without a search.
    private var loaded: [String: Channel] = [:]
    /// The last channel the pages reached; `nil` before the first page.
    var boundary: Channel?
    /// Every matching channel is in the view.
    var isComplete = false
    /// Where the service's next page starts; `nil` before the first page.
    var serverCursor: String?
    /// The service has no more pages.
    var serverExhausted = false
    /// A fetch is running.
    var isFetching = false
    /// A fetch ran out of cached channels while the service was out of reach: the
    /// service's page is fetched by itself once online.
    var owesServerPage = false
    /// That fetch told the app the list has no more, and the service's page after it has
    /// not been answered yet.
    var toldNoMoreAway = false
    /// Told so, and away from the service now: every cached channel the query matches
    /// belongs in the view, also one that moves below its last row meanwhile (a queued
    /// deletion of its last message lowers it). Online, the owed page takes over from
    /// the boundary this leaves.
    var coversCache = false
    /// That owed page is being fetched; the app's fetches wait for it.
    private(set) var isFetchingOwedPage = false
    private var owedPageWaiters: [CheckedContinuation<Void, Never>] = []
    /// The stream created with the collection.
    let first: FirstEventStream<ChannelCollectionEvent>
    /// Further `events` streams and observable models.
    let subscribers = EventSubscribers<ChannelCollectionEvent>()
    /// Events sent so far, so a test can tell when a consumer has read them all.
    private(set) var emittedCount = 0

    init(id: Int, query: ChannelListQuery, events: FirstEventStream<ChannelCollectionEvent>) {
        self.id = id
        self.query = query
        self.first = events
    }

    func finish() {
        finishOwedPage()
        first.finish()
        subscribers.finishAll()
    }

    /// Marks the owed page as being fetched.
    func startOwedPage() { isFetchingOwedPage = true }

    /// Resumes `waiter` when the owed page's fetch has ended.
    func onOwedPageFetched(_ waiter: CheckedContinuation<Void, Never>) {
        if isFetchingOwedPage { owedPageWaiters.append(waiter) } else { waiter.resume() }
    }

    /// Ends the owed page's fetch and wakes the fetches that waited for it.
    func finishOwedPage() {
        isFetchingOwedPage = false
        let waiters = owedPageWaiters
        owedPageWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    private func emit(_ event: ChannelCollectionEvent) {
        emittedCount += 1
        first.yield(event)
        subscribers.yield(event)
    }

    /// Whether `channel` belongs in the view.
    func admits(_ channel: Channel) -> Bool {
        guard query.matches(channel) else { return false }
        if isComplete || coversCache { return true }
        guard let boundary else { return false }
        return !query.order.sortsBefore(boundary, channel)
    }

    /// Moves the boundary to `channel` if it sorts later than the current one.
    func extendBoundary(to channel: Channel) {
        if let boundary, !query.order.sortsBefore(boundary, channel) { return }
        boundary = channel
    }

    /// Applies channels' changes (`nil`: the channel is gone), each at its own place,
    /// and emits them as one event per kind: removals, moves, insertions, updates.
    func apply(_ changes: [(channelURL: String, now: Channel?)]) {
        var removed: [Channel] = []
        var moved: [Channel] = []
        var inserted: [Channel] = []
        var updated: [Channel] = []
        // A channel named twice (a service page may repeat one) counts once, as its last state.
        var seen: Set<String> = []
        let unique = changes.reversed().filter { seen.insert($0.channelURL).inserted }.reversed()
        for (channelURL, now) in unique {
            let before = loaded[channelURL]
            if let before { take(before) }
            guard let now, admits(now) else {
                if let before { removed.append(before) }
                continue
            }
            put(now)
            // Below the last row, admitted as one the app was told it has: the boundary
            // follows, so the view still holds exactly what sorts at or before it.
            if coversCache, !isComplete { extendBoundary(to: now) }
            guard let before else {
                inserted.append(now)
                continue
            }
            guard before != now else { continue }
            if sortsDifferently(before, now) { moved.append(now) } else { updated.append(now) }
        }
        let order = query.order
        for (kind, list) in [(ChannelEventAction.remove, removed), (.move, moved), (.insert, inserted), (.update, updated)]
        where !list.isEmpty {
            emit(.channels(kind, list.sorted { order.sortsBefore($0, $1) }))
        }
    }

    /// Applies one channel's change (`nil`: it is gone).
    func reconcile(channelURL: String, now channel: Channel?) {
        apply([(channelURL, channel)])
    }

    /// The index where `channel` is, or would be, in the loaded channels.
    private func place(of channel: Channel) -> Int {
        var (low, high) = (0, channels.count)
        while low < high {
            let middle = (low + high) / 2
            if query.order.sortsBefore(channels[middle], channel) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func take(_ channel: Channel) {
        loaded[channel.channelURL] = nil
        let index = place(of: channel)
        if index < channels.count, channels[index].channelURL == channel.channelURL {
            channels.remove(at: index)
        } else {
            channels.removeAll { $0.channelURL == channel.channelURL }  // never expected: the order is total
        }
    }

    private func put(_ channel: Channel) {
        loaded[channel.channelURL] = channel
        channels.insert(channel, at: place(of: channel))
    }

    /// How many times the view was emptied: a fetch that spans a clear starts again.
    private(set) var clears = 0

    /// Empties the view with one clear event.
    func clear() {
        clears += 1
        channels = []
        loaded = [:]
        boundary = nil
        isComplete = false
        serverCursor = nil
        serverExhausted = false
        owesServerPage = false
        toldNoMoreAway = false
        coversCache = false
        emit(.channels(.clear, []))
    }

    private func sortsDifferently(_ before: Channel, _ after: Channel) -> Bool {
        switch query.order {
        case .latestLastMessage: before.lastActivityAt != after.lastActivityAt
        case .chronological: before.createdAt != after.createdAt
        case .channelNameAlphabetical: !before.name.utf8.elementsEqual(after.name.utf8)
        }
    }
}
