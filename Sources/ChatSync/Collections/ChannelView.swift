/// The engine's state of one ``ChannelCollection``.
///
/// The view holds exactly the cached channels that match its query and sort at or
/// before its boundary (the last channel its pages reached), or all of them once the
/// end is known. Every change is applied the same way: recompute that set from the
/// cache and emit the difference.
final class ChannelView {
    let id: Int
    let query: ChannelListQuery
    /// In query order.
    private(set) var channels: [Channel] = []
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
    /// That owed page is being fetched; the app's fetches wait for it.
    private(set) var isFetchingOwedPage = false
    private var owedPageWaiters: [CheckedContinuation<Void, Never>] = []
    private let continuation: AsyncStream<ChannelCollectionEvent>.Continuation
    /// Events sent so far, so a test can tell when a consumer has read them all.
    private(set) var emittedCount = 0

    init(id: Int, query: ChannelListQuery, continuation: AsyncStream<ChannelCollectionEvent>.Continuation) {
        self.id = id
        self.query = query
        self.continuation = continuation
    }

    func finish() {
        finishOwedPage()
        continuation.finish()
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
        continuation.yield(event)
    }

    /// Whether `channel` belongs in the view.
    func admits(_ channel: Channel) -> Bool {
        guard query.matches(channel) else { return false }
        if isComplete { return true }
        guard let boundary else { return false }
        return !query.order.sortsBefore(boundary, channel)
    }

    /// Moves the boundary to `channel` if it sorts later than the current one.
    func extendBoundary(to channel: Channel) {
        if let boundary, !query.order.sortsBefore(boundary, channel) { return }
        boundary = channel
    }

    /// Makes the view hold exactly the admitted channels of `cached` (every cached
    /// channel), emitting removals, moves, insertions and updates, in that order.
    func reconcile(with cached: [Channel]) {
        show(cached.filter(admits))
    }

    /// Applies one channel's change (`nil`: it is gone) without reading the others.
    func reconcile(channelURL: String, now channel: Channel?) {
        var target = channels.filter { $0.channelURL != channelURL }
        if let channel, admits(channel) { target.append(channel) }
        show(target)
    }

    private func show(_ admitted: [Channel]) {
        let target = admitted.sorted { query.order.sortsBefore($0, $1) }
        let old = Dictionary(channels.map { ($0.channelURL, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Set(target.map(\.channelURL))
        let removed = channels.filter { !new.contains($0.channelURL) }
        var moved: [Channel] = []
        var inserted: [Channel] = []
        var updated: [Channel] = []
        for channel in target {
            guard let before = old[channel.channelURL] else {
                inserted.append(channel)
                continue
            }
            guard before != channel else { continue }
            if sortsDifferently(before, channel) { moved.append(channel) } else { updated.append(channel) }
        }
        channels = target
        if !removed.isEmpty { emit(.channels(.remove, removed)) }
        if !moved.isEmpty { emit(.channels(.move, moved)) }
        if !inserted.isEmpty { emit(.channels(.insert, inserted)) }
        if !updated.isEmpty { emit(.channels(.update, updated)) }
    }

    /// Empties the view with one clear event.
    func clear() {
        channels = []
        boundary = nil
        isComplete = false
        serverCursor = nil
        serverExhausted = false
        owesServerPage = false
        emit(.channels(.clear, []))
    }

    private func sortsDifferently(_ before: Channel, _ after: Channel) -> Bool {
        switch query.order {
        case .latestLastMessage: before.lastActivityAt != after.lastActivityAt
        case .chronological: before.createdAt != after.createdAt
        case .channelNameAlphabetical: before.name != after.name
        }
    }
}
