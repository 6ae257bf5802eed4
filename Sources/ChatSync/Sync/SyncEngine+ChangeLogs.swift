// MARK: - Message change logs: what changed in a channel while nobody listened

extension SyncEngine {
    /// Applies the channel's change logs since its stored token, once per connection
    /// epoch, or fetches a first token. Answers `false` when the service could not be reached.
    func applyChangeLogsIfDue(_ channelURL: String) async throws -> Bool {
        if channels[channelURL]?.changeLogsEpoch == epoch { return true }
        return try await whileAwaitingAnswers(channelURL) { try await applyChangeLogsNow(channelURL) }
    }

    private func applyChangeLogsNow(_ channelURL: String) async throws -> Bool {
        let epochAtStart = epoch
        let scope = ChatStore.messageTokenScope(channelURL)
        let limit = options.syncBatchSize
        var token = try store.syncToken(scope: scope)
        if token == nil {
            let first = try await requestUnlessTransient {
                try await $0.messageChangeLogs(channelURL: channelURL, token: nil, limit: limit)
            }
            guard let first, !isClosed else { return false }
            if try store.syncToken(scope: scope) == nil { try store.setSyncToken(first.token, scope: scope) }
        } else {
            while let since = token {
                let logs: MessageChangeLogs?
                do {
                    logs = try await requestUnlessTransient {
                        try await $0.messageChangeLogs(channelURL: channelURL, token: since, limit: limit)
                    }
                } catch let refused as ChatServiceError where Self.refusesTheToken(refused) {
                    guard !isClosed else { return false }
                    // Two requests of one connection may carry the same token (a fetch's and
                    // the catch-up's): the history goes once, for the first refusal; the
                    // second finds the token gone and only asks again.
                    if try store.syncToken(scope: scope) == since { try forgetCachedHistory(of: channelURL, because: refused) }
                    return try await applyChangeLogsIfDue(channelURL)  // without a token now: asks for a first one
                }
                guard let logs, !isClosed else { return false }
                // More behind a token that did not move would be asked for again for ever:
                // malformed, and unanswered for this pass (its retries are bounded).
                if logs.hasMore, logs.token == since {
                    logger.warning("the change logs of \(channelURL) say more follow but keep their token: taken as unanswered")
                    return false
                }
                try applyChangeLogs(logs, channelURL: channelURL)
                if logs.token != since { changeLogPagesApplied += 1 }
                token = logs.hasMore ? logs.token : nil
            }
        }
        if epoch == epochAtStart { channels[channelURL, default: ChannelSyncState()].changeLogsEpoch = epoch }
        return true
    }

    /// Applies one page of change logs and stores its token, in one transaction.
    private func applyChangeLogs(_ logs: MessageChangeLogs, channelURL: String) throws {
        // The user's messages keep the request ids this device knows: a service may leave
        // them out of change logs as it may of echoes.
        let updated = try withKnownReqIds(laterThanTheAnswer(Self.sanitized(logs.updated, channelURL: channelURL), in: channelURL))
        // Also the ones the cache does not hold: `message(reqId:)` may answer them, and a
        // page in flight may carry an older copy.
        for message in updated {
            refreshSyncedLately(message)
            rememberEditForAnswersInFlight(message)
        }
        let chunks = try chunks(of: channelURL)
        let (refreshed, preview) = try store.write { db -> ([Message], Message?) in
            // Messages the cache holds are refreshed, and so are messages new to it inside a
            // range it holds as complete (one added to history while the app was away);
            // the others arrive with later syncs. An edit never moves a message in time; a
            // copy that does is malformed and skipped.
            let held = try updated.filter { message in
                guard let createdAt = try ChatStore.createdAt(channelURL: channelURL, messageId: message.messageId, in: db) else {
                    return chunks.contains { $0.contains(message.sortKey) }
                }
                return createdAt == message.createdAt
            }
            try ChatStore.upsertMessages(held, in: db)
            for id in logs.deletedMessageIds { _ = try ChatStore.deleteMessage(channelURL: channelURL, messageId: id, in: db) }
            try ChatStore.setSyncToken(logs.token, scope: ChatStore.messageTokenScope(channelURL), in: db)
            // Read here, saving a read transaction per page; `noteChangedMessage` reads the
            // channel again before it changes anything (what follows may change it first).
            let changesSome = !updated.isEmpty || !logs.deletedMessageIds.isEmpty
            return (held, changesSome ? try ChatStore.channel(channelURL, in: db)?.lastMessage : nil)
        }
        noteCacheWrites(refreshed.count)
        noteDeleted(channelURL: channelURL, messageIds: logs.deletedMessageIds)
        for view in views(of: channelURL) { view.remove(messageIds: Set(logs.deletedMessageIds)) }
        try resolveOwnUpdates(refreshed, in: channelURL)
        refreshViews(channelURL, with: refreshed)
        if let preview { notePreviewChanges(channelURL: channelURL, preview: preview, updated: updated, deleted: logs.deletedMessageIds) }
    }

    /// Change logs that edit or delete the channel's last message (`preview`, as cached)
    /// change its preview, as real-time edits and deletions do, also when the cache holds
    /// no copy of the message itself (a preview from a channel page).
    private func notePreviewChanges(channelURL: String, preview last: Message, updated: [Message], deleted: [Int64]) {
        if deleted.contains(last.messageId) {
            noteChangedMessage(channelURL: channelURL, messageId: last.messageId, now: nil)
        } else if let edited = updated.last(where: { $0.messageId == last.messageId }) {
            noteChangedMessage(channelURL: channelURL, messageId: last.messageId, now: edited.asSynced)
        }
    }

    /// Whether the service refused a change-log request for its token (expired, or
    /// unknown to it) rather than for the channel (gone, or the user no longer a member).
    static func refusesTheToken(_ error: ChatServiceError) -> Bool {
        !error.isTransient && (error.code == .invalid || error.code == ChatServiceError.Code(rawValue: 410))
    }

    /// The channel's change-log token was refused for good (Guarantees: Live updates and
    /// reconnect): what changed since it cannot be learnt, so no cached message of the
    /// channel can be trusted. They are dropped with the channel's ranges and token, in
    /// one transaction (the outbox stays), its collections are cleared, and they fill
    /// again from the service as they fetch; those that were at the newest messages
    /// stand there again and receive new ones as before.
    private func forgetCachedHistory(of channelURL: String, because refused: ChatServiceError) throws {
        logger.warning("the change-log token of \(channelURL) was refused (\(refused)): its cached messages are dropped and synced again")
        try store.forgetCachedHistory(channelURL: channelURL)
        forgetSyncedLately(droppedWithHistoryOf: channelURL)
        historyResetCount += 1
        historyDrops.dropped(channelURL)
        var state = channels[channelURL, default: ChannelSyncState()]
        state.chunks = []
        state.connectionLost()  // nothing cached is live any more
        state.changeLogsEpoch = nil
        channels[channelURL] = state
        // As after a clear (`MessageView.historyDropped`): a view left at `.max` knew nothing
        // of the channel, and one whose fetch is out proves the channel live when the fetch
        // ends (`fetchEnded`), since the request that dropped the history proved nothing for
        // a view that was not fresh then (soak seed 325: a quiet channel's screen stayed
        // empty). A fresh view holds nothing, and keeps what it knew when it opened.
        for view in views(of: channelURL) where !view.isFresh { view.historyDropped() }
    }
}
