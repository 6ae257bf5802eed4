// MARK: - Channel change logs, and a refused token

extension SyncEngine {
    /// Applies the channel change logs again, in the background, once for any number of
    /// calls made before it runs.
    func refreshChannelListsSoon() {
        guard isOnline, channelLists.scheduleRefresh() else { return }
        runInBackground { engine in await engine.refreshChannelLists() }
    }

    private func refreshChannelLists() async {
        channelLists.startRefresh()
        do { try await applyChannelChangeLogsOrRetry(startedByEvents: true) } catch {
            logger.warning("channel change logs failed: \(error)")
        }
    }

    /// ``applyChannelChangeLogsIfDue()``; unanswered (a flaky link), the logs stay due and
    /// the chain of sync retries asks for them again: nothing else would before the next
    /// reconnect, and a list paged to its end learns only from them of a channel the cache
    /// never held that a new message lifts into it (the channel-list generator's flaky
    /// change logs), or of one that moved across its cursor while it paged. Work the
    /// service's events started (`startedByEvents`) joins a chain that goes on rather than
    /// starting a count of its own; an app's fetch starts one.
    func applyChannelChangeLogsOrRetry(startedByEvents: Bool) async throws {
        let connection = epoch
        guard try await !applyChannelChangeLogsIfDue(), !isClosed else { return }
        if startedByEvents, epoch == connection, syncPasses.joinChain(epoch: connection) { return }
        scheduleSyncRetry(attempt: 0, epoch: connection)
    }

    /// Applies the channel change logs since the stored token, once per connection
    /// epoch, or fetches a first token. Answers `false` when the service could not be reached.
    func applyChannelChangeLogsIfDue() async throws -> Bool {
        if channelLists.changeLogsApplied(in: epoch) { return true }
        let epochAtStart = epoch
        let scope = ChatStore.channelTokenScope
        var token = try store.syncToken(scope: scope)
        if token == nil {
            guard let first = try await requestUnlessTransient({ try await $0.channelChangeLogs(token: nil, limit: 100) }), !isClosed else {
                return false
            }
            if try store.syncToken(scope: scope) == nil { try store.setSyncToken(first.token, scope: scope) }
            if channelLists.takesTokenAfterDrop {
                // The token kept, this one or one another pass took meanwhile.
                channelLists.takesTokenAfterDrop = false
                channelLists.tokenAfterDrop = try store.syncToken(scope: scope).map { ($0, epoch) }
            }
        } else {
            // How many times a round may be asked again because its answer knew less than the cache.
            var asksAgain = 2
            while let since = token {
                let answer: ChannelChangeLogs?
                let mark = channelLists.changeMark
                do {
                    answer = try await requestUnlessTransient { try await $0.channelChangeLogs(token: since, limit: 100) }
                } catch let refused as ChatServiceError where Self.refusesTheToken(refused) {
                    guard !isClosed else { return false }
                    // Two passes may carry the same token: the cache goes once, for the first refusal.
                    if try store.syncToken(scope: scope) == since { try forgetCachedChannels(refusedToken: since, because: refused) }
                    return try await applyChannelChangeLogsIfDue()  // without a token now: asks for a first one
                }
                guard var logs = answer, !isClosed else { return false }
                if since == channelLists.tokenAfterDrop?.token { channelLists.tokenAfterDrop = nil }  // answered: a good token
                // An answer asked for before the cache took one of its channels from the
                // service, or dropped one, cannot be merged without losing a side for good:
                // its token is past what it cannot tell, so no later change log would
                // correct it. Asked again from the same token, the answer knows what the
                // cache learnt (twice at most; a third is merged as a page is).
                if asksAgain > 0, knowsLessThanTheCache(logs, since: mark) {
                    asksAgain -= 1
                    continue
                }
                logs.updated = try keepingWhatTheCacheLearntSince(logs.updated, since: mark).map(showingQueuedWrites)
                let shown = try cachedCopiesShown(logs.updated)
                try store.write { db in
                    try ChatStore.upsertChannels(logs.updated, in: db)
                    // Deleted or left: the channel goes with its history, as for a real-time event.
                    for url in logs.deletedChannelURLs { try ChatStore.deleteChannel(url, in: db) }
                    try ChatStore.setSyncToken(logs.token, scope: scope, in: db)
                }
                for channel in logs.updated {
                    channelLists.noteChannelChanged(channel.channelURL)
                    reconcileChannelViews(channelURL: channel.channelURL, now: channel)
                }
                for url in logs.deletedChannelURLs {
                    channelLists.noteRemoved(url)
                    showChannelGone(url)
                }
                announceChannelChanges(shown)
                token = logs.hasMore ? logs.token : nil
            }
        }
        if epoch == epochAtStart { channelLists.noteChangeLogsApplied(in: epoch) }
        return true
    }

    /// The channel change-log token was refused for good (it expired): which channels were
    /// deleted or left since cannot be learnt, so no cached channel can be trusted. They
    /// are dropped with the token, every list is cleared and owes the service's first
    /// page again, which the reconnect's pass (or one started here, retried with its
    /// backoff) fetches; an app's fetch under way goes on from that first page.
    ///
    /// A service that refuses the first token it gave after a drop, before any answer to
    /// it, is not believed again: the error goes to the caller, so the lists are not
    /// cleared over and over.
    private func forgetCachedChannels(refusedToken token: String, because refused: ChatServiceError) throws {
        guard !channelLists.isTokenAfterDrop(token, in: epoch) else { throw refused }
        channelLists.takesTokenAfterDrop = true
        logger.warning("the channel change-log token was refused (\(refused)): the cached channels are dropped and listed again")
        try store.forgetCachedChannels()
        clearListsOwingTheirFirstPage()
    }
}
