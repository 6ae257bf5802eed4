// MARK: - A view's pending and failed lists: the outbox's messages of its channel

extension MessageView {
    func isPending(_ reqId: String) -> Bool { pendingList.contains(reqId) }
    func isFailed(_ reqId: String) -> Bool { failedList.contains(reqId) }

    /// Adds to the pending list (or replaces the entry with the same `reqId`).
    func upsertPending(_ message: Message) {
        switch pendingList.upsert(message) {
        case (.inserted, let listed): emit(.pending(.insert, [listed]))
        case (.updated, let listed): emit(.pending(.update, [listed]))
        case (.unchanged, _): break
        }
    }

    @discardableResult
    func removePending(_ reqId: String) -> Bool {
        guard let message = pendingList.remove(reqId) else { return false }
        emit(.pending(.remove, [message]))
        return true
    }

    func upsertFailed(_ message: Message, reason: FailedMessageEventActionReason) {
        switch failedList.upsert(message) {
        case (.inserted, let listed): emit(.failed(.insert, [listed], reason))
        case (.updated, let listed), (.unchanged, let listed): emit(.failed(.update, [listed], reason))
        }
    }

    @discardableResult
    func removeFailed(_ reqId: String, reason: FailedMessageEventActionReason) -> Bool {
        guard let message = failedList.remove(reqId) else { return false }
        emit(.failed(.remove, [message], reason))
        return true
    }
}
