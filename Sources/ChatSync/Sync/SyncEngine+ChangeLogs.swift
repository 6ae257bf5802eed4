// MARK: - Message change logs: what changed in a channel while nobody listened

extension SyncEngine {
    /// Applies the channel's change logs since its stored token, once per connection
    /// epoch, or fetches a first token. Answers `false` when the service could not be reached.
    func applyChangeLogsIfDue(_ channelURL: String) async throws -> Bool {
        if channels[channelURL]?.changeLogsEpoch == epoch { return true }
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
                let logs = try await requestUnlessTransient {
                    try await $0.messageChangeLogs(channelURL: channelURL, token: since, limit: limit)
                }
                guard let logs, !isClosed else { return false }
                try applyChangeLogs(logs, channelURL: channelURL)
                token = logs.hasMore ? logs.token : nil
            }
        }
        if epoch == epochAtStart { channels[channelURL, default: ChannelSyncState()].changeLogsEpoch = epoch }
        return true
    }

    /// Applies one page of change logs and stores its token, in one transaction.
    private func applyChangeLogs(_ logs: MessageChangeLogs, channelURL: String) throws {
        let updated = Self.sanitized(logs.updated, channelURL: channelURL)
        let chunks = try chunks(of: channelURL)
        let refreshed = try store.write { db -> [Message] in
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
            return held
        }
        noteCacheWrites(refreshed.count)
        noteDeleted(channelURL: channelURL, messageIds: logs.deletedMessageIds)
        for view in views(of: channelURL) { view.remove(messageIds: Set(logs.deletedMessageIds)) }
        try resolveOwnUpdates(refreshed, in: channelURL)
        refreshViews(channelURL, with: refreshed)
    }
}
