import ChatSyncTesting
import Testing

@testable import ChatSync

/// The soak's cache clears: alice frees up space (`clearCache()`) in whatever state the
/// schedule is in (offline, paused, faults on, sends and edits queued), sometimes while
/// requests or answers are on their way, sometimes just before the app is killed. The
/// outbox must come through whole (the step's checks compare every pending and failed
/// list with it, and the final check counts every send), the views must refill without a
/// hole, and a view at the newest messages must show them again (Guarantees: Live updates
/// and reconnect), in a quiet channel too, once the connection is up and settled.
extension SoakTests {
    func cacheCleared(
        _ harness: inout Harness, _ subjects: inout [Subject], random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        let server = harness.server
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            state.log.append("alice clears the cache")
            try await harness.manager.clearCache()
        case 1:
            // Requests of every kind wait at the server's door (sends, edits, pages, look-ups),
            // the cache is cleared under them, others change the channel, then all go at once.
            await server.holdRequests()
            let held = await eventually(turns: 2_000) { await server.heldRequestCount > 0 }
            state.log.append("alice clears the cache with \(held ? "requests" : "nothing") at the door")
            try await harness.manager.clearCache()
            try await othersChangeAChannel(harness, random: &random, state: &state)
            await server.releaseRequests()
        case 2:
            // A page made before the clear arrives after it; or the app fetches right after
            // the clear, on the same slow link. The order is the seed's, not the machine's:
            // each fetch is held by the engine before the step goes on.
            await server.holdReadAnswers()
            let subject = subjects.randomElement(using: &random)!
            let direction: Direction = Bool.random(using: &random) ? .previous : .next
            let engine = harness.manager.engine
            if Bool.random(using: &random) {
                let fetch = await FetchUnderway.start(subject.model.collection, direction, engine: engine)
                let held = await eventually(turns: 20_000) { await server.heldReadAnswerCount > 0 }
                state.log.append("alice clears the cache while \(subject.channelURL) fetches \(direction)\(held ? ", answers out" : "")")
                try await harness.manager.clearCache()
                try await othersChangeAChannel(harness, random: &random, state: &state)
                await server.releaseReadAnswers()
                await fetched(harness, subject, direction, hasMore: await fetch.hasMore, state: &state)
            } else {
                state.log.append("alice clears the cache, then fetches \(direction) \(subject.channelURL)")
                try await harness.manager.clearCache()
                // Watched from the clear on, so that the fetch's end moves the watch (see `fetched`):
                // a `.next` one from `.max` rightly shows only what comes after it (soak seed 449).
                await watchViewsAtNewest(subjects, harness, &state)
                let collection = subject.model.collection
                let fetch = await FetchUnderway.start(collection, direction, engine: engine)
                try await othersChangeAChannel(harness, random: &random, state: &state)
                await server.releaseReadAnswers()
                let hasMore = await fetch.hasMore
                // A `.previous` one placed the emptied view at the newest messages; fallen short
                // under faults (less than a page, more to come), its top may hold nothing of the
                // view's filter, and the app's next fetch goes on below it (soak seed 86): what
                // is posted from now on is still owed to it.
                let unreliable = state.faulty || state.faultsInForce || state.outageInForce
                if direction == .previous, hasMore == true, unreliable, await collection.messageCount < collection.limit {
                    await owesOnlyWhatComesNext(subject, harness, &state)
                }
                await fetched(harness, subject, direction, hasMore: hasMore, state: &state)
                return
            }
        default:
            // Killed right after the clear: the relaunch finds an empty cache and the whole outbox.
            state.log.append("alice clears the cache, then the app is killed")
            try await harness.manager.clearCache()
            for subject in subjects { await subject.model.collection.remove() }
            try await harness.relaunch()
            subjects = try await openSubjects(harness, failures: state.failures)
            if state.running { await harness.manager.resumeSync() } else { await harness.manager.pauseSync() }
            // New views, not emptied ones: never fetched, each shows what arrives after the
            // newest message its cache knew when it opened (README: Known limitations), so
            // only what the service stores from now on is owed to it.
            for subject in subjects {
                let newest = await server.messages(in: subject.channelURL).last?.sortKey ?? .min
                await watch(subject, from: newest, harness, &state)
            }
            return
        }
        await watchViewsAtNewest(subjects, harness, &state)
    }

    /// Every view at `.max` after a clear knows nothing of its channel: it must show the
    /// channel's newest message from the next settled check on (online), whenever that was posted.
    private func watchViewsAtNewest(_ subjects: [Subject], _ harness: Harness, _ state: inout SoakState) async {
        for subject in subjects where await harness.manager.engine.viewpoint(subject.model.collection.id) == .max {
            await watch(subject, from: .min, harness, &state)
        }
    }

    private func watch(_ subject: Subject, from watermark: MessageKey, _ harness: Harness, _ state: inout SoakState) async {
        let collection = subject.model.collection
        state.atNewest[ObjectIdentifier(collection)] = SoakState.Watch(
            collection, watermark: watermark, state: state, chainsRunOut: await harness.manager.engine.syncRetryChainsRunOut,
            gapReports: subject.model.recorder.gapReports)
    }

    /// Another user posts, edits or deletes in one of the soak's channels.
    private func othersChangeAChannel(_ harness: Harness, random: inout SeededGenerator, state: inout SoakState) async throws {
        let channelURL = Self.channels.randomElement(using: &random)!
        let all = await harness.server.messages(in: channelURL)
        switch Int.random(in: 0..<3, using: &random) {
        case 0 where !all.isEmpty:
            let target = all.randomElement(using: &random)!
            try await harness.server.delete(messageId: target.messageId, channelURL: channelURL)
            state.withdrawn.insert(target.reqId)
            state.log.append("  others delete \(target.messageId) in \(channelURL)")
        case 1 where !all.isEmpty:
            let target = all.randomElement(using: &random)!
            let text = "cleared \(state.log.count)"
            try await harness.server.update(messageId: target.messageId, channelURL: channelURL, text: text)
            state.allowedTexts[MessageRef(target)]?.insert(text)
            state.log.append("  others edit \(target.messageId) in \(channelURL)")
        default:
            try await harness.server.post(.text("after clear"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
            state.log.append("  post to \(channelURL)")
        }
    }

    /// The views watched since a clear show their channel's newest message (of their
    /// filter) once settled online. A view stops being watched when it leaves the newest
    /// messages: reset, closed, told of a gap, or grown past its window.
    func checkViewsAtNewest(_ harness: Harness, _ subjects: [Subject], state: inout SoakState, context: String) async {
        let open = Set(subjects.map { ObjectIdentifier($0.model.collection) })
        for key in state.atNewest.keys where !open.contains(key) { state.atNewest[key] = nil }
        if state.faulty || state.faultsInForce || state.outageInForce {
            for key in state.atNewest.keys { state.atNewest[key]?.sawFaults = true }
        }
        guard state.online && state.running else { return }
        for subject in subjects {
            let key = ObjectIdentifier(subject.model.collection)
            guard let watermark = state.atNewest[key]?.watermark else { continue }
            let collection = subject.model.collection
            let count = await collection.messageCount
            let gapReported = subject.model.recorder.gapReports > state.atNewest[key]!.gapReportsBefore
            if gapReported || count + collection.limit > harness.options.messageCollectionCapacity {
                state.atNewest[key] = nil
                continue
            }
            let truth = await harness.server.messages(in: subject.channelURL)
            let newest = truth.last(where: subject.model.filter.matches)
            let shown = await collection.succeededMessages.last
            let engine = harness.manager.engine
            let view = await engine.describeView(collection.id)
            // Not proven live, or the newest page not completed: allowed only once their
            // retries ran out on this connection since the watch began (Guarantees: at most
            // eight in a row without progress), leaving this channel unproven (or this view's
            // page owed), which takes faults (a fifth of the requests
            // failed, a fifth of the answers lost) or an outage (the relaunch paths' faults:
            // every request lost or failed, or half of them lost) since then.
            let live = await engine.isLive(subject.channelURL)
            let owed = await engine.owesNewestPage(viewId: collection.id)
            if !live || owed {
                let watch = state.atNewest[key]!
                let unreliable = watch.sawFaults || state.outages > watch.outagesBefore
                let chainRanOut = await engine.syncRetriesRanOut(leaving: subject.channelURL)
                let chainsRunOut = await engine.syncRetryChainsRunOut
                let pageRanOut = await engine.owedNewestPageRanOut(viewId: collection.id)
                let ranOut = live ? pageRanOut : chainRanOut && chainsRunOut > watch.chainsRunOutBefore
                #expect(
                    unreliable && ranOut,
                    "after a clear, \(subject.channelURL) is \(live ? "live" : "not live") and \(owed ? "owes" : "does not owe") the newest page of a view \(subject.model.filter) (\(view)), \(unreliable ? "after faults" : "with no faults since")\(ranOut ? ", its retries run out" : ""): \(context)"
                )
                // What a view the channel's going live placed shows is its newest messages.
                if live, let shown, let newest {
                    #expect(
                        shown.messageId == newest.messageId,
                        "after a clear, a view of \(subject.channelURL) \(subject.model.filter) completing its newest page shows \(shown.messageId), not the newest \(newest.messageId) (view \(view)): \(context)"
                    )
                }
                continue
            }
            guard let newest, newest.sortKey > watermark else { continue }
            let connection = await harness.manager.connectionState
            #expect(
                shown?.messageId == newest.messageId,
                "after a clear, the view of \(subject.channelURL) \(subject.model.filter) at the newest messages shows \(shown?.messageId ?? -1), not the newest \(newest.messageId) (view \(view), \(connection)): \(context)"
            )
        }
    }

    /// A fetch of a view: a `.next` one that reached the newest messages makes the view
    /// follow from the service's newest message (what came while it was out is history to
    /// it, as to a view the model test opens at `.max`); one that did not ends the watch.
    /// One that failed leaves the view where it was (a fresh view stays fresh). A
    /// `.previous` one leaves the view at the newest messages, unless it filled the
    /// view's window (see `checkViewsAtNewest`).
    func fetched(_ harness: Harness, _ subject: Subject, _ direction: Direction, hasMore: Bool?, state: inout SoakState) async {
        let key = ObjectIdentifier(subject.model.collection)
        guard direction == .next, state.atNewest[key] != nil else { return }
        guard let hasMore else { return }
        guard !hasMore else {
            state.atNewest[key] = nil
            return
        }
        await owesOnlyWhatComesNext(subject, harness, &state)
    }

    /// From now on the watched view owes only what is posted after the server's newest message.
    private func owesOnlyWhatComesNext(_ subject: Subject, _ harness: Harness, _ state: inout SoakState) async {
        let key = ObjectIdentifier(subject.model.collection)
        guard let watched = state.atNewest[key] else { return }
        let newest = await harness.server.messages(in: subject.channelURL).last?.sortKey ?? .min
        state.atNewest[key]?.watermark = max(watched.watermark, newest)
    }

    /// A message dated before a channel's newest is history, not news, to a view at the newest messages.
    func postingInThePast(_ channelURL: String, newest: MessageKey?, state: inout SoakState) {
        guard let newest else { return }
        for (key, watched) in state.atNewest where watched.collection.channelURL == channelURL {
            state.atNewest[key]?.watermark = max(watched.watermark, newest)
        }
    }
}

extension SoakTests.SoakState {
    /// A view watched since a clear (see `checkViewsAtNewest`).
    struct Watch {
        let collection: MessageCollection
        /// The key above which the view must show its channel's newest message.
        var watermark: MessageKey
        /// Outages begun before the watch, not counting one still in force.
        let outagesBefore: Int
        /// Whether requests failed or lost their answers at some step of the watch, so that
        /// a chain of retries may have run out (Guarantees: at most eight in a row).
        var sawFaults: Bool
        /// The engine's chains of sync retries run out, and the view's gap reports, before the watch.
        let chainsRunOutBefore: Int
        let gapReportsBefore: Int

        init(
            _ collection: MessageCollection, watermark: MessageKey, state: SoakTests.SoakState, chainsRunOut: Int,
            gapReports: Int
        ) {
            self.collection = collection
            self.watermark = watermark
            chainsRunOutBefore = chainsRunOut
            gapReportsBefore = gapReports
            outagesBefore = state.outages - (state.outageInForce ? 1 : 0)
            sawFaults = state.faulty || state.faultsInForce || state.outageInForce
        }
    }
}
