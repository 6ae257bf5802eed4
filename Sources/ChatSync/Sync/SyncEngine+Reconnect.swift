// MARK: - Reconnect: change logs, then catching views up, with retries on the injected clock

extension SyncEngine {
    /// What a return of the connection starts, once per connection (`connected`: the
    /// epoch it came back in): the relaunch's look-ups, the lanes, then the reconnect sync.
    /// A return whose connection was lost again before this ran leaves it all to the next
    /// return's own run. Before, each read the epoch only when its task ran, so two returns
    /// handled in one batch both found the one connection left: it was synced twice, with
    /// two chains of retries against a service that answered neither, and its owed newest
    /// pages were resumed twice.
    func syncAfterComingOnline(epoch connected: Int) async {
        guard epoch == connected, isOnline else { return }
        await reconcileRelaunch()
        confirmFailedSends()
        kickLanes()
        await reconnect(epoch: connected)
    }

    /// After a reconnect or resume: change logs first, then the views that follow the
    /// newest messages catch up from the newest chunk's edge. What the service did not
    /// answer (a transient failure) is tried again after a backoff on the injected clock.
    private func reconnect(epoch connected: Int) async {
        guard epoch == connected, canReachService else { return }
        await runSyncPass(attempt: 0, epoch: connected)
        if epoch == connected, canReachService { resumeOwedNewestPages() }
    }

    /// Runs one pass of the reconnect sync of connection `connected`, after `attempt`
    /// retries, and asks for the next retry if it was incomplete; while another pass of
    /// that connection runs, leaves it to that one (``SyncPassSchedule``).
    private func runSyncPass(attempt: Int, epoch connected: Int) async {
        guard syncPasses.startPass(epoch: connected, attempt: attempt) else { return }
        syncPassWitness?(connected, true)
        let reachBefore = syncReach()
        let complete = await syncAfterReconnect(epoch: connected)
        syncPassWitness?(connected, false)
        // A pass during which the sync got further starts the count of retries over: on a
        // flaky link, a sync that needs many requests loses one now and then, and counted
        // in all, eight losses gave up on channels never proven live (the soak found it).
        let counted = reachBefore.isPassed(by: syncReach()) ? 0 : attempt
        if let next = syncPasses.endPass(epoch: connected, attempt: counted, complete: complete) {
            scheduleSyncRetry(attempt: next, epoch: connected)
        }
    }

    /// One pass of the reconnect sync of connection `connected`; answers whether every
    /// request of it was answered. It stops once that connection is gone: a pass that went
    /// on into the next connection claimed that connection's catch-ups, so the next
    /// connection's own pass skipped them, and when one failed nobody retried it (its
    /// retry was asked for under the old connection). A second reader found it.
    private func syncAfterReconnect(epoch connected: Int) async -> Bool {
        var complete = true
        do {
            // Always, lists open or not: channels cached from real-time events before any
            // token existed could never learn that they were left or deleted meanwhile.
            complete = try await applyChannelChangeLogsIfDue()
        } catch {
            logger.warning("channel change logs after reconnecting failed: \(error)")
        }
        if await !fetchOwedChannelPages() { complete = false }
        let channelURLs = Set(views.values.map(\.channelURL)).sorted()
        for channelURL in channelURLs {
            guard isOnline, epoch == connected else { return false }
            do {
                guard try await applyChangeLogsIfDue(channelURL) else {
                    complete = false
                    continue
                }
                guard epoch == connected else { return false }
                if views(of: channelURL).contains(where: { $0.reachedNewest || $0.isFresh }), let connection = claimCatchUp(channelURL) {
                    defer { endCatchUp(channelURL, epoch: connection) }
                    if try await !catchUp(channelURL, epoch: connection) { complete = false }
                }
            } catch {
                logger.warning("sync of \(channelURL) after reconnecting failed: \(error)")
            }
        }
        return complete
    }

    /// Runs the reconnect sync again after 1, 2, 4, ... 30 s on the injected clock, at
    /// most ``syncRetryLimit`` times in a row without progress; a pass during which the
    /// sync got further (``SyncReach``), a later fetch, resume or reconnect starts the
    /// count over. Without this a lost response would leave the cache stale (missed
    /// deletions, a channel never live again) until the next connection change. One
    /// connection has one such chain (``SyncPassSchedule``).
    func scheduleSyncRetry(attempt: Int, epoch epochAtFailure: Int) {
        if attempt >= Self.syncRetryLimit, epoch == epochAtFailure {
            let unproven = Set(views.values.map(\.channelURL)).filter { channels[$0]?.liveEdge == nil }
            syncPasses.noteGaveUp(epoch: epochAtFailure, leftUnproven: unproven)
        }
        guard isOnline, !isClosed, epoch == epochAtFailure, attempt < Self.syncRetryLimit,
            let ticket = syncPasses.requestRetry(epoch: epochAtFailure, attempt: attempt)
        else { return }
        let wait = retryWait(after: attempt)
        logger.debug("sync after reconnecting incomplete, attempt \(attempt + 1) follows")
        runInBackground { engine in
            do { try await wait() } catch { return }
            await engine.retrySync(attempt: attempt + 1, epoch: epochAtFailure, ticket: ticket)
        }
    }

    private func retrySync(attempt: Int, epoch epochAtFailure: Int, ticket: Int) async {
        guard isOnline, !isClosed, epoch == epochAtFailure, syncPasses.retryIsDue(epoch: epochAtFailure, ticket: ticket) else {
            return
        }
        await runSyncPass(attempt: attempt, epoch: epochAtFailure)
    }

    /// Whether the current connection's chain of sync retries ran out (see ``SyncPassSchedule``).
    var syncRetriesRanOut: Bool { syncPasses.gaveUp && syncPasses.epoch == epoch }

    /// How many times one connection retries an incomplete reconnect sync.
    static let syncRetryLimit = 8

    /// The wait before retry `attempt + 1` of an unanswered request: 1, 2, 4 … 30 s on
    /// the injected clock (the reconnect sync, the relaunch's look-ups, an answer's check).
    func retryWait(after attempt: Int) -> @Sendable () async throws -> Void {
        Self.sleeper(options.clock, for: .seconds(min(1 << attempt, 30)))
    }

}
