// MARK: - Messages of this device that synced lately, kept across relaunches
//
// `message(reqId:)` answers them although no cached range holds them (an answer whose
// echo had not come when the app was killed, a channel never viewed, a history evicted
// since). The engine reads them back when it opens; these keep the store's copies as the
// memory's: forgotten when deleted, following newer versions.

extension SyncEngine {
    /// The service deleted these messages: `message(reqId:)` no longer answers them, in
    /// this run or a later one.
    func forgetSyncedLately(channelURL: String, messageIds: [Int64]) {
        guard outbox.noteDeleted(channelURL: channelURL, messageIds: messageIds) else { return }
        do {
            try store.forgetSyncedLately(channelURL: channelURL, messageIds: messageIds)
        } catch {
            logger.error("could not forget deleted messages synced lately: \(error)")
        }
    }

    /// A message turned out deleted already: the same, for one.
    func forgetSyncedLately(_ message: Message) {
        guard outbox.forgetSynced(message) else { return }
        do {
            try store.forgetSyncedLately(channelURL: message.channelURL, messageIds: [message.messageId])
        } catch {
            logger.error("could not forget a deleted message synced lately: \(error)")
        }
    }

    /// A newer version of a message arrived: a remembered copy follows it.
    func refreshSyncedLately(_ message: Message) {
        guard outbox.noteUpdated(message) else { return }
        do {
            try store.refreshSyncedLately(message)
        } catch {
            logger.error("could not refresh a message synced lately: \(error)")
        }
    }

    /// Looks up the messages synced lately in `channelURL` when what changed there since
    /// its change-log token cannot be learnt (the token was refused): each copy takes the
    /// service's version, or is forgotten if the service no longer has it. Answers `false`
    /// when a look-up went unanswered (the caller tries again later); a channel the
    /// service refuses for good leaves the copies as they were.
    func verifySyncedLately(in channelURL: String) async -> Bool {
        let reqIds = outbox.recentlySynced.reqIds(in: channelURL).sorted()
        for start in stride(from: 0, to: reqIds.count, by: 100) {
            let batch = Array(reqIds[start..<min(start + 100, reqIds.count)])
            let found: [Message]
            do {
                guard let answer = try await requestUnlessTransient({ try await $0.lookUpMessages(channelURL: channelURL, reqIds: batch) }),
                    !isClosed
                else { return false }
                found = answer
            } catch {
                return true
            }
            let byReqId = Dictionary(
                found.filter { $0.channelURL == channelURL }.map { ($0.reqId, $0) }, uniquingKeysWith: { first, _ in first })
            for reqId in batch {
                if let current = byReqId[reqId] {
                    refreshSyncedLately(current.asSynced)
                } else if let copy = outbox.recentlySynced[reqId] {
                    forgetSyncedLately(copy)
                }
            }
        }
        return true
    }
}
