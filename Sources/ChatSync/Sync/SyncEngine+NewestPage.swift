// MARK: - A fresh view's newest page, completed when the channel goes live

/// The completion of a fresh view's newest page, from when it starts until the page is
/// full, the channel's end (or the floor) is reached, or the app's own fetch takes over.
struct OwedNewestPage: Sendable {
    /// The completion stops above this key (exclusive): the newest message the cache held
    /// when the view opened, which the view does not show. `nil`: it may read to the oldest.
    let floor: MessageKey?
    /// A fill of it is started or running: a reconnect must not start a second one beside it.
    var isRunning = false
    /// Bumped when a reconnect resumes the completion: retries scheduled before then
    /// find it changed and stop, so one connection has one chain of retries.
    var chain = 0
    /// The connection in which its last chain of retries ran out (for tests).
    var ranOutInEpoch: Int?
}

extension SyncEngine {
    /// Whether a fresh view, just placed at the live edge of `chunk` with `shown` of the
    /// `read` rows it was given, may be missing part of its newest page: it holds less
    /// than a page, and either queued deletions hid part of a full read (the chunk may
    /// hold more below it), or messages may exist below the chunk that are newer than
    /// the newest one cached when the view opened (`known`; with nothing cached then, any
    /// message counts).
    func newestPageIsShort(_ view: MessageView, shown: Int, read: Int, chunk: Chunk, known: MessageKey?) -> Bool {
        guard shown < view.limit else { return false }
        if read == view.limit { return true }
        return chunk.start != .min && known.map { chunk.start > $0 } ?? true
    }

    /// Completes, in the background, the newest page of a view the channel's going live
    /// left short (see ``newestPageIsShort(_:shown:read:chunk:known:)``): the live chunk holds
    /// only the newest batch, and a filtered view may find none of its messages there.
    /// Without this, a view opened at `.max` while offline on an empty cache showed
    /// nothing once online although its newest messages existed, until the app fetched
    /// again, which nothing on an empty screen prompts it to do.
    ///
    /// Reads older, as a `.previous` fetch would, until the page is full, the channel's
    /// oldest message or `known` is reached; it gives way to the app's own `.previous`
    /// fetch and stops at a viewpoint reset. When the service does not answer, it is
    /// tried again after a backoff on the injected clock (as the reconnect sync is); when
    /// the connection breaks, the reconnect resumes it. Before, it stopped there, and the
    /// empty screen stayed empty for the same reason this exists.
    func completeNewestPage(of view: MessageView, above known: MessageKey?) {
        view.owedNewestPage = OwedNewestPage(floor: known)
        fillOwedNewestPage(of: view, attempt: 0)
    }

    /// After a reconnect: every completion still owed starts a new chain of retries; one
    /// whose fill still runs (begun on the last connection) goes on, and starts its
    /// retries from the first when it ends short.
    func resumeOwedNewestPages() {
        for view in views.values.sorted(by: { $0.id < $1.id }) where view.owedNewestPage != nil {
            view.owedNewestPage?.chain += 1
            fillOwedNewestPage(of: view, attempt: 0)
        }
    }

    /// Starts a fill of the view's owed page unless one is already under way. It counts
    /// as under way from here, not from when its task first runs: a reconnect between the
    /// two would otherwise start a second fill, and a second chain of retries, beside it.
    private func fillOwedNewestPage(of view: MessageView, attempt: Int, afterProgress: Bool = false) {
        guard let owed = view.owedNewestPage, !owed.isRunning else { return }
        view.owedNewestPage?.isRunning = true
        newestPageTryWitness?(view.id, epoch, afterProgress)
        let (id, generation, channelURL) = (view.id, view.generation, view.channelURL)
        runInBackground { engine in
            do {
                try await engine.fillNewestPage(ofView: id, generation: generation, attempt: attempt, chain: owed.chain)
            } catch {
                await engine.logNewestPageFailure(channelURL, error)
            }
        }
    }

    /// One fill of the owed page, `attempt` tries into the chain of retries `chain`.
    private func fillNewestPage(ofView id: Int, generation: Int, attempt: Int, chain: Int) async throws {
        guard let view = views[id], view.generation == generation else { return }
        defer { if view.generation == generation { view.owedNewestPage?.isRunning = false } }
        guard let owed = view.owedNewestPage else { return }
        let fill = PageFill(generation: generation, delivered: view.succeeded.count, floor: owed.floor, yieldsToApp: true)
        let reachBefore = view.lowerBound
        let hasMore = try await fillPage(of: view, .previous, fill)
        guard views[id] === view, view.generation == generation, let now = view.owedNewestPage else { return }
        // Done: the page is full, the channel's end (or the floor) was reached, or the
        // app's own fetch goes on from here.
        if !hasMore || view.succeeded.count >= view.limit || view.fetching.contains(.previous) {
            view.owedNewestPage = nil
            return
        }
        // Short with more to read: the service did not answer, or the connection broke
        // (then the reconnect resumes it). Again after a backoff, a bounded number of
        // times in a row per connection: a reconnect since this fill was started began a
        // new chain, whose tries count from the first, and so does a try that reached
        // further back before it failed. Otherwise a sparse filter on a flaky link, which
        // needs many requests and loses one now and then, gave up after eight losses in
        // all, its page short for good (the soak found it after a clear).
        let reachedFurther = view.lowerBound.map { bound in reachBefore.map { bound < $0 } ?? true } ?? false
        let next = now.chain == chain && !reachedFurther ? attempt : 0
        guard canReachService else { return }
        guard next < Self.syncRetryLimit else {
            view.owedNewestPage?.ranOutInEpoch = epoch
            return
        }
        let (wait, connection) = (retryWait(after: next), epoch)
        runInBackground { engine in
            do { try await wait() } catch { return }
            await engine.retryNewestPage(
                ofView: id, generation: generation, attempt: next + 1, chain: now.chain, epoch: connection, afterProgress: reachedFurther)
        }
    }

    /// A retry of the connection `epoch`: it stops when that connection was lost since (the
    /// reconnect resumes the page with a chain of its own, even when this wakes before
    /// the reconnect got to it) or when a reconnect already resumed it.
    private func retryNewestPage(ofView id: Int, generation: Int, attempt: Int, chain: Int, epoch: Int, afterProgress: Bool) async {
        guard canReachService, self.epoch == epoch, let view = views[id], view.generation == generation,
            view.owedNewestPage?.chain == chain
        else { return }
        fillOwedNewestPage(of: view, attempt: attempt, afterProgress: afterProgress)
    }

    private func logNewestPageFailure(_ channelURL: String, _ error: any Error) {
        logger.warning("completing a view's newest page in \(channelURL) failed: \(error)")
    }
}
