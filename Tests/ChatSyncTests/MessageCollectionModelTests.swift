import ChatSyncTesting
import Foundation
import Logging
import Testing

@testable import ChatSync

/// Random schedules of fetches, posts, edits, deletions, offline periods, pauses and
/// viewpoint resets, with the event guarantees checked after every step.
@Suite("MessageCollection model", .capturingLogs)
struct MessageCollectionModelTests {
    /// Who posts in the schedules.
    static let senders = ["bob", "carol", "alice"]

    @Test(arguments: 0..<ScheduleSeeds.modelBatchCount)
    func randomSchedulesKeepEveryGuarantee(batch: Int) async throws {
        let crossed = await ScheduleSeeds.model.runCountingCrossings(batch: batch, of: ScheduleSeeds.modelBatchCount) {
            try await MessageCollectionModelTests().runSchedule(seed: $0)
        }
        // No write ever waits behind another write here: alice's edits and deletions share
        // the channel's text lane, one request at a time. So: a page ahead of an older
        // page, and an answer ahead of an older one of the other kind (an edit's answer
        // before a page made first, a page before an edit's answer).
        if let count = crossed {
            #expect(count.reads > 0 && count.acrossKinds > 0, "answers crossed in batch \(batch): \(count)")
        }
    }

    /// Runs one schedule; answers how many read and write answers its crossed-answers steps
    /// let through ahead of older ones.
    private func runSchedule(seed: UInt64) async throws -> AnswersCrossed {
        var answersCrossed = AnswersCrossed()
        var random = SeededGenerator(seed: seed)
        // The rare paths draw from their own generator, so each seed's main schedule stays as it was.
        var paths = SeededGenerator(seed: seed &+ 5_000_000)
        // Alice's own edits and deletions, from a generator of their own so that the other
        // steps of each seed stay what they were.
        var writes = SeededGenerator(seed: seed &+ 6_000_000)
        // A small cache in three schedules of four, drawn apart too: evictions then run
        // beside the views (beyond their windows) while they fetch and follow the channel.
        var capacities = SeededGenerator(seed: seed &+ 8_000_000)
        // Screens that reappear (issue 18), from a generator of their own too.
        var screens = SeededGenerator(seed: seed &+ 10_000_000)
        // Others' bursts queued behind a busy engine (issue 17's runs), drawn apart too.
        var bursts = SeededGenerator(seed: seed &+ 11_000_000)
        // Change-log tokens the server no longer honours, drawn apart too.
        var tokens = SeededGenerator(seed: seed &+ 12_000_000)
        // A reconnect's catch-up held in flight across a second break and return, drawn apart too.
        var reconnects = SeededGenerator(seed: seed &+ 14_000_000)
        // Breaks and returns among a queued burst's posts, drawn apart too.
        var flaps = SeededGenerator(seed: seed &+ 15_000_000)
        // Pages answered before changes and arriving after them, drawn apart too.
        var lateAnswers = SeededGenerator(seed: seed &+ 16_000_000)
        // The app clearing the cache, drawn apart too.
        var clears = SeededGenerator(seed: seed &+ 19_000_000)
        // Returns from away whose catch-up loses every other page, drawn apart too.
        var lossyReturns = SeededGenerator(seed: seed &+ 21_000_000)
        // Fresh views whose channel is proven live over a flaky link, drawn apart too.
        var freshProofs = SeededGenerator(seed: seed &+ 22_000_000)
        // The app fetching every newer message at once, in any connection state, drawn apart too.
        var allNext = SeededGenerator(seed: seed &+ 23_000_000)
        // Views opened offline at a place in history, drawn apart too.
        var offlineViews = SeededGenerator(seed: seed &+ 24_000_000)
        // A view's edge message deleted before a trim, then a message dated beside it, drawn apart too.
        var deletedEdges = SeededGenerator(seed: seed &+ 26_000_000)
        // Answers let through one by one in an order of their own, drawn apart too.
        var crossed = SeededGenerator(seed: seed &+ 27_000_000)
        // Empty views in history opened while away, then a message dated into their span, drawn apart too.
        var emptyHistories = SeededGenerator(seed: seed &+ 28_000_000)
        let capacity = Int.random(in: 0..<4, using: &capacities) == 0 ? nil : 200
        let stepSize = Int.random(in: 1...40, using: &capacities)
        let (harness, late) = try await Harness.makeWrapped(
            seed: seed,
            configure: {
                $0.messageStoreCapacity = capacity
                $0.syncBatchSize = Int.random(in: 1...12, using: &random)
                $0.hugeGapThreshold = 25
                $0.messageCollectionCapacity = 200
                $0.logger = Logger(label: "seed-\(seed)")
            },
            wrapper: { LateMessageAnswers(base: CatchUpHolder(base: EveryOtherRequestLost(base: $0, losing: .newerPages))) })
        let holder = try #require(late.base as? CatchUpHolder)
        let losses = try #require(holder.base as? EveryOtherRequestLost)
        // Small steps, so that a trim yields often and the views fetch and move between its steps.
        await harness.manager.engine.setEvictionStepSize(stepSize)
        let server = harness.server
        let senders = Self.senders
        for index in 0..<Int.random(in: 0...150, using: &random) {
            let params: MessageParams = index % 5 == 0 ? .custom(customType: "poll", data: "") : .text("h\(index)")
            try await server.post(params, from: senders[Int.random(in: 0...2, using: &random)], to: Harness.channel)
        }
        await harness.online()
        var subjects: [ModelSubject] = []
        var rare = RarePaths()
        for filter in [MessageFilter(), MessageFilter(senderIds: ["carol"]), MessageFilter(kinds: [.custom])] {
            let all = await server.messages(in: Harness.channel)
            let viewpoint = Bool.random(using: &random) || all.isEmpty ? Int64.max : all.randomElement(using: &random)!.createdAt
            let collection = try await harness.manager.messageCollection(
                channelURL: Harness.channel, filter: filter, viewpoint: viewpoint, limit: Int.random(in: 1...15, using: &random))
            let recorder = EventRecorder()
            await collection.setHandler(recorder)
            await recorder.attachConsumers(to: collection)
            subjects.append(ModelSubject(collection: collection, recorder: recorder, filter: filter))
            if viewpoint == .max { rare.following[collection.id] = await server.newestKey }
        }
        var online = true
        var running = true
        var log: [String] = []
        var historyResets = 0
        var expiries = 0
        var deletions = DeletedMessageWatch()

        for step in 0..<40 {
            let subject = subjects.randomElement(using: &random)!
            let all = await server.messages(in: Harness.channel)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<35:
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                log.append("fetch \(direction) \(subject.filter)")
                let hasMore = try await subject.fetchCheckingPageSize(direction, context: "seed \(seed) step \(step) \(log.suffix(10))")
                await rare.fetched(subject, direction, hasMore: hasMore, server: server, capacity: 200)
            case 35..<55:
                let sender = senders[Int.random(in: 0...2, using: &random)]
                log.append("post by \(sender)")
                let params: MessageParams = Bool.random(using: &random) ? .custom(customType: "poll", data: "") : .text("s\(step)")
                try await server.post(params, from: sender, to: Harness.channel)
            case 55..<63:
                if let target = all.randomElement(using: &random) {
                    log.append("edit \(target.messageId)")
                    try await server.update(messageId: target.messageId, channelURL: Harness.channel, text: "edit \(step)")
                }
            case 63..<71:
                if let target = all.randomElement(using: &random) {
                    log.append("delete \(target.messageId)")
                    try await server.delete(messageId: target.messageId, channelURL: Harness.channel)
                }
            case 71..<79:
                online.toggle()
                log.append(online ? "online" : "offline")
                if online { await rare.connectionBack(server) } else { await rare.connectionBreaks(harness, subjects) }
                await server.setOnline(online, for: "alice")
            case 79..<85:
                running.toggle()
                log.append(running ? "resume" : "pause")
                if running { await rare.connectionBack(server) } else { await rare.connectionBreaks(harness, subjects) }
                if running { await harness.manager.resumeSync() } else { await harness.manager.pauseSync() }
            case 85..<92:
                let target = Bool.random(using: &random) || all.isEmpty ? Int64.max : all.randomElement(using: &random)!.createdAt
                log.append("reset \(target)")
                try await subject.collection.resetViewpointTimestamp(target)
                rare.following[subject.collection.id] = target == .max ? await server.newestKey : nil
            default:
                log.append("burst")
                // Queued while the engine is busy, the burst is applied as one run.
                let count = Int.random(in: 10...40, using: &random)
                try await harness.withEventsQueued {
                    for index in 0..<count { try await server.post(.text("burst \(index)"), from: "bob", to: Harness.channel) }
                }
            }
            if Int.random(in: 0..<5, using: &bursts) == 0 {
                try await Self.queuedBurst(
                    harness, subjects, &rare, flapping: online && running && !rare.awaitsGapReports, random: &bursts,
                    flaps: &flaps, log: &log)
            }
            if Int.random(in: 0..<4, using: &writes) == 0, let target = all.filter({ $0.senderId == "alice" }).randomElement(using: &writes)
            {
                // Through the outbox, in whatever state the connection is in; refused only
                // when her cache does not hold the message (or its deletion is queued).
                do {
                    if Bool.random(using: &writes) {
                        log.append("alice edits \(target.messageId)")
                        let shown = try await harness.manager.updateMessage(
                            messageId: target.messageId, channelURL: Harness.channel, text: "alice's \(step)")
                        #expect(shown.isEditPending && shown.text == "alice's \(step)", "seed \(seed) step \(step): shown at once")
                    } else {
                        log.append("alice deletes \(target.messageId)")
                        try await harness.manager.deleteMessage(messageId: target.messageId, channelURL: Harness.channel)
                    }
                } catch let error as SyncManagerError where error.code == .invalidParameter {
                    log.append("  refused")
                }
            }
            if Int.random(in: 0..<12, using: &tokens) == 0 {
                try await Self.tokensExpireWhileAway(harness, online: online, running: running, random: &tokens, log: &log)
                expiries += 1
            }
            let lossyReturn = Bool.random(using: &lossyReturns)
            if Int.random(in: 0..<3, using: &paths) == 0 {
                try await rare.walk(
                    harness, &subjects, online: online, running: running, random: &paths, log: &log,
                    losing: lossyReturn ? losses : nil)
            }
            if online, running, !rare.awaitsGapReports, Int.random(in: 0..<6, using: &reconnects) == 0 {
                try await Self.catchUpHeldAcrossAReconnect(harness, holder, subjects, &rare, random: &reconnects, log: &log)
            }
            if online, running, !rare.awaitsGapReports, Int.random(in: 0..<6, using: &lateAnswers) == 0 {
                if try await Self.pageAnsweredBeforeChanges(harness, late, subjects, &rare, random: &lateAnswers, log: &log) {
                    expiries += 1
                }
            }
            if online, running, !rare.awaitsGapReports, Int.random(in: 0..<6, using: &crossed) == 0 {
                // A generator per step: how many answers get held depends on the machine,
                // so the step's draws must not move the later steps' ones.
                var content = SeededGenerator(seed: crossed.next())
                let crossings = try await Self.crossedAnswers(harness, subjects, &rare, step: step, random: &content, log: &log)
                log.append("  crossed \(crossings)")
                answersCrossed += crossings
            }
            if online, running, !rare.awaitsGapReports, Int.random(in: 0..<8, using: &freshProofs) == 0 {
                try await Self.freshViewsProvenLiveOnAFlakyLink(harness, losses, &subjects, &rare, random: &freshProofs, log: &log)
            }
            if !rare.awaitsGapReports, Int.random(in: 0..<15, using: &clears) == 0 {
                try await Self.cacheCleared(
                    harness, late, subjects, &rare, online: online, running: running, random: &clears, log: &log)
            }
            if !(online && running), Bool.random(using: &offlineViews) {
                try await Self.viewOpenedOfflineInHistory(harness, random: &offlineViews, log: &log, context: "seed \(seed) step \(step)")
            }
            if !(online && running), !rare.awaitsGapReports, Int.random(in: 0..<3, using: &emptyHistories) == 0 {
                try await Self.emptyHistoryViewMeetsABackdatedMessage(
                    harness, subjects, &rare, online: online, running: running, random: &emptyHistories, log: &log,
                    context: "seed \(seed) step \(step)")
            }
            // Not while a gap report is awaited: the app's fetch would fill the gap first.
            if Int.random(in: 0..<6, using: &allNext) == 0, !rare.awaitsGapReports {
                try await Self.fetchEveryNewerMessage(
                    subjects.randomElement(using: &allNext)!, server, &rare, online: online && running, log: &log,
                    context: "seed \(seed) step \(step) \(log.suffix(10))")
            }
            // Only a capped cache trims.
            if capacity != nil, !rare.awaitsGapReports, Int.random(in: 0..<4, using: &deletedEdges) == 0 {
                try await Self.viewEdgeDeletedBeforeATrim(
                    harness, subjects, &rare, online: online, running: running, random: &deletedEdges, log: &log,
                    context: "seed \(seed) step \(step) \(log.suffix(10))")
            }
            await reappearingScreen(subjects, random: &screens, log: &log)
            await harness.settle()
            #expect(
                await harness.manager.engine.historyResetCount <= expiries,
                "seed \(seed) step \(step): the cached history goes once per expiry, not once per refused request")
            if await harness.manager.engine.historyResetCount != historyResets {
                // An expired token cleared the views: those at the newest messages show the
                // newest page again, from a moment the schedule cannot tell (see
                // ChangeLogTokenTests for what they show); the watch starts over.
                historyResets = await harness.manager.engine.historyResetCount
                rare.following.removeAll()
            }
            try await rare.check(
                harness, subjects, online: online, running: running, context: "seed \(seed) step \(step) \(log.suffix(10))")
            let truth = await server.messages(in: Harness.channel)
            deletions.check(
                subjects, settledOnline: online && running, serverMessages: truth,
                context: "seed \(seed) step \(step) \(log.suffix(10))")
            for subject in subjects {
                let succeeded = await checkInvariants(
                    subject.collection, subject.recorder, context: "seed \(seed) step \(step) \(log.suffix(10))")
                #expect(succeeded.allSatisfy(subject.filter.matches))
                // Eviction never takes what an open view shows (Guarantees: Bounded cache).
                let store = harness.manager.engine.store
                let evicted = try succeeded.filter { try store.message(channelURL: Harness.channel, messageId: $0.messageId) == nil }
                #expect(evicted.isEmpty, "seed \(seed) step \(step): an open view's messages left the cache: \(evicted.map(\.messageId))")
                if online && running {
                    let expected = serverRange(truth, subject.filter, from: succeeded.first, to: succeeded.last)
                    let state = await harness.manager.engine.describeView(subject.collection.id)
                    #expect(
                        succeeded.map(\.messageId) == expected.map(\.messageId),
                        "seed \(seed) step \(step) \(subject.filter): the view equals the server between its ends; view \(state); steps \(log)"
                    )
                    #expect(
                        try harness.manager.engine.store.operations().isEmpty,
                        "seed \(seed) step \(step): alice's edits and deletions landed; \(log.suffix(10))")
                    let stale = zip(succeeded, expected).filter { $0.text != $1.text || $0.isEditPending }.map { view, server in
                        let cached = try? harness.manager.engine.store.message(channelURL: Harness.channel, messageId: view.messageId)
                        return
                            "\(view.messageId): view '\(view.text)'@\(view.updatedAt) server '\(server.text)'@\(server.updatedAt) cache '\(cached?.text ?? "-")'"
                    }
                    #expect(
                        stale.isEmpty, "seed \(seed) step \(step) \(subject.filter): edits reached the view: \(stale); \(log.suffix(10))")
                }
            }
        }
        await harness.manager.close()
        return answersCrossed
    }
}
