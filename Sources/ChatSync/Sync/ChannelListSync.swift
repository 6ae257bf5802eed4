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

    /// Counts the changes to cached channels that an answer asked for earlier does not
    /// know of: when each channel's last message changed, when the service told a
    /// channel's state, and when each was removed (deleted, or left). An answer asked for
    /// before then knows less than the cache. (Kept for the run: an entry per channel.)
    private var changes = 0
    private var lastMessageChangedAt: [String: Int] = [:]
    private var channelChangedAt: [String: Int] = [:]
    private var removedAt: [String: Int] = [:]

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

    /// Channels whose newest message is being asked for as their preview, and whether
    /// another ask was wanted meanwhile.
    private var previewAsks: [String: Bool] = [:]

    /// Answers whether to start an ask for the channel's preview: not while one is out,
    /// which then asks again once it ends.
    mutating func startPreviewAsk(_ channelURL: String) -> Bool {
        guard previewAsks[channelURL] == nil else {
            previewAsks[channelURL] = true
            return false
        }
        previewAsks[channelURL] = false
        return true
    }

    /// An ask for the channel's preview ended: answers whether to ask again.
    mutating func endPreviewAsk(_ channelURL: String) -> Bool {
        guard previewAsks[channelURL] == true else {
            previewAsks[channelURL] = nil
            return false
        }
        previewAsks[channelURL] = false
        return true
    }

    /// The mark to take before asking the service for channels.
    var changeMark: Int { changes }

    /// The cache took a new last message for the channel (a real-time message, an edit
    /// or deletion of it, a channel event, the change logs).
    mutating func noteLastMessageChanged(_ channelURL: String) {
        changes += 1
        lastMessageChangedAt[channelURL] = changes
    }

    /// Whether the channel's last message changed in the cache after `mark` was taken.
    func lastMessageChanged(_ channelURL: String, since mark: Int) -> Bool { (lastMessageChangedAt[channelURL] ?? 0) > mark }

    /// The cache took the channel as the service told it (a channel event, the change
    /// logs): its name, members and last message.
    mutating func noteChannelChanged(_ channelURL: String) {
        noteLastMessageChanged(channelURL)
        channelChangedAt[channelURL] = changes
    }

    /// Whether the cache took the channel from the service after `mark` was taken.
    func channelChanged(_ channelURL: String, since mark: Int) -> Bool { (channelChangedAt[channelURL] ?? 0) > mark }

    /// The channel left the cache: deleted, or the user left it (a real-time event, or
    /// the change logs).
    mutating func noteRemoved(_ channelURL: String) {
        changes += 1
        removedAt[channelURL] = changes
    }

    /// Whether the channel left the cache after `mark` was taken: an answer asked for
    /// before then that names it would bring it back, and no later change log would
    /// name its removal again.
    func wasRemoved(_ channelURL: String, since mark: Int) -> Bool { (removedAt[channelURL] ?? 0) > mark }

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
