/// What the engine knows, in memory, about its channel lists: the open ones, and how
/// far the channel change logs have been applied.
struct ChannelListSync {
    /// Open channel lists by view id.
    private(set) var views: [Int: ChannelView] = [:]
    /// The connection epoch in which the channel change logs were last applied; `nil`
    /// when they are due again.
    private(set) var changeLogsEpoch: Int?
    /// A background pass over the channel change logs is scheduled.
    private(set) var isRefreshScheduled = false

    /// Counts the changes of cached channels' last messages, and when each channel's last
    /// one changed: an answer asked for before then knows less than the cache.
    private var lastMessageChanges = 0
    private var lastMessageChangedAt: [String: Int] = [:]

    /// The cached channels were dropped for a refused token, and the first token after
    /// that is still to be taken.
    var takesTokenAfterDrop = false
    /// The first token taken after the cached channels were dropped, and the connection it
    /// was taken in, until a change-log answer to it proves it good: a service that
    /// refuses that one too, in that connection, would have the lists dropped over and
    /// over. In a later connection a refusal is believed (the token may have expired).
    var tokenAfterDrop: (token: String, epoch: Int)?

    /// Whether `token` is the first one taken after a drop, in connection `epoch`.
    func isTokenAfterDrop(_ token: String, in epoch: Int) -> Bool {
        tokenAfterDrop.map { $0.token == token && $0.epoch == epoch } ?? false
    }

    /// The mark to take before asking the service for channels.
    var lastMessageMark: Int { lastMessageChanges }

    /// The cache took a new last message for the channel (a real-time message, an edit
    /// or deletion of it, a channel event, the change logs).
    mutating func noteLastMessageChanged(_ channelURL: String) {
        lastMessageChanges += 1
        lastMessageChangedAt[channelURL] = lastMessageChanges
    }

    /// Whether the channel's last message changed in the cache after `mark` was taken.
    func lastMessageChanged(_ channelURL: String, since mark: Int) -> Bool { (lastMessageChangedAt[channelURL] ?? 0) > mark }

    /// The open lists in the order they were opened (events reach them in that order).
    var viewsInOrder: [ChannelView] { views.values.sorted { $0.id < $1.id } }

    /// Whether `view` is still the open list with its id (not removed while a request was out).
    func isOpen(_ view: ChannelView) -> Bool { views[view.id] === view }

    mutating func open(_ view: ChannelView) { views[view.id] = view }

    mutating func remove(_ id: Int) -> ChannelView? { views.removeValue(forKey: id) }

    /// Closes every list (the manager closes).
    mutating func finishAll() {
        for view in views.values { view.finish() }
        views.removeAll()
    }

    /// Whether the change logs were applied in `epoch` already.
    func changeLogsApplied(in epoch: Int) -> Bool { changeLogsEpoch == epoch }

    mutating func noteChangeLogsApplied(in epoch: Int) { changeLogsEpoch = epoch }

    /// Something may have moved that only the change logs name: apply them at the next chance.
    mutating func changeLogsAreDue() { changeLogsEpoch = nil }

    /// Schedules one background pass; answers `false` when one is scheduled already.
    mutating func scheduleRefresh() -> Bool {
        guard !isRefreshScheduled else { return false }
        isRefreshScheduled = true
        return true
    }

    /// The scheduled pass starts: later calls schedule another one, and the logs are due.
    mutating func startRefresh() {
        isRefreshScheduled = false
        changeLogsEpoch = nil
    }
}
