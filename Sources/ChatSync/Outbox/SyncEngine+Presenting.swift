// MARK: - Presenting outbox entries in views and to their observers

extension SyncEngine {
    /// Shows an entry's state in its channel's views and to its observers.
    ///
    /// - Parameter entering: the entry joins a list now (a new message, or one that just
    ///   failed): views that do not hold it yet add it. Otherwise only views that hold
    ///   it are updated (Guarantees: Pending and failed lists; older entries join through fetchPending/FailedMessages).
    func present(_ entry: OutboxEntry, entering: Bool = false, reason: FailedMessageEventActionReason = .none) {
        for view in views(of: entry.channelURL) where view.filter.matches(entry.message) {
            if entry.isInFailedList {
                let joinedNow = view.isPending(entry.reqId)
                view.removePending(entry.reqId)
                if entering || joinedNow || view.isFailed(entry.reqId) {
                    view.upsertFailed(entry.message, reason: reason)
                }
            } else if entering || view.isPending(entry.reqId) {
                view.upsertPending(entry.message)
            }
        }
        observers.publish(entry.message)
    }

    /// Removes an entry from its channel's views and ends its observers.
    func withdraw(_ entry: OutboxEntry, reason: FailedMessageEventActionReason) {
        for view in views(of: entry.channelURL) {
            view.removePending(entry.reqId)
            view.removeFailed(entry.reqId, reason: reason)
        }
        observers.finish(entry.reqId)
    }

    /// Writes a changed entry and presents it.
    @discardableResult
    func save(_ entry: OutboxEntry, entering: Bool = false, reason: FailedMessageEventActionReason = .none) throws -> OutboxEntry {
        try store.updateOutbox(entry)
        present(entry, entering: entering, reason: reason)
        return entry
    }

}
