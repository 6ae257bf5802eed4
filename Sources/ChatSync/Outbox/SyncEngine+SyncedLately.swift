// MARK: - Messages of this device that synced lately, kept across relaunches
//
// `message(reqId:)` answers them although no cached range holds them (an answer whose
// echo had not come when the app was killed, a channel never viewed, a copy evicted
// since). The engine reads them back when it opens; these keep the store's copies as the
// memory's: forgotten when deleted, following newer versions. The store is written
// first, so that a write that fails leaves a copy that both still hold.

extension SyncEngine {
    /// The service deleted these messages: `message(reqId:)` no longer answers them, in
    /// this run or a later one.
    func forgetSyncedLately(channelURL: String, messageIds: [Int64]) {
        if outbox.recentlySynced.remembers(channelURL: channelURL, messageIds: messageIds) {
            do {
                try store.forgetSyncedLately(channelURL: channelURL, messageIds: messageIds)
            } catch {
                // Still remembered as deleted in this run; a later run may answer the copy.
                logger.error("could not forget deleted messages synced lately: \(error)")
            }
        }
        outbox.noteDeleted(channelURL: channelURL, messageIds: messageIds)
    }

    /// A message turned out deleted already: the same, for one.
    func forgetSyncedLately(_ message: Message) {
        guard outbox.recentlySynced.remembers(channelURL: message.channelURL, messageIds: [message.messageId]) else { return }
        do {
            try store.forgetSyncedLately(channelURL: message.channelURL, messageIds: [message.messageId])
        } catch {
            logger.error("could not forget a deleted message synced lately: \(error)")
            return
        }
        outbox.forgetSynced(message)
    }

    /// A newer version of a message arrived: a remembered copy follows it.
    func refreshSyncedLately(_ message: Message) {
        guard outbox.recentlySynced.wouldRefresh(message) else { return }
        do {
            try store.refreshSyncedLately(message)
        } catch {
            logger.error("could not refresh a message synced lately: \(error)")
            return
        }
        outbox.noteUpdated(message)
    }

    /// A channel's cached history was dropped (every channel's, with `nil`: the cache was
    /// cleared), the store's part of the record with it: the memory's goes too, since
    /// nothing now tells what changed there.
    func forgetSyncedLately(droppedWithHistoryOf channelURL: String?) {
        outbox.forgetSyncedCopies(in: channelURL)
        historyDropWitness?(channelURL)
    }
}
