import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// Random schedules that mix sending, cancelling, resending, fault plans, offline
/// periods and relaunches (close and reopen the same file) with other users'
/// traffic, checking after every step the guarantees of Sources/ChatSync/ChatSync.docc/Guarantees.md (Collection events; Outbox and order; Failure, retries and resend policy).
@Suite("Outbox model", .capturingLogs)
struct OutboxModelTests {
    private struct Sent {
        let reqId: String
        let lane: SendLane
        let permanent: Bool
        /// What alice wrote, when the step chose it with an awkward tail (the service must get it byte for byte).
        var text: String? = nil
    }

    /// Every edit or deletion that failed for good, and every message that failed, across relaunches.
    private let operationFailures = FailureLog()

    private func open(_ harness: Harness, filters: [MessageFilter]) async throws -> [ModelSubject] {
        let failures = operationFailures
        await harness.manager.engine.setOperationFailureWitness { failures.record($0) }
        await harness.manager.engine.setFailureWitness { failures.record($0) }
        // Drops for the failed list's limits made while a collection loads its failed list
        // reach no list's events: the engine tells them.
        await harness.manager.engine.setLimitDropWitness { failures.recordLimitDrop($0) }
        var subjects: [ModelSubject] = []
        for filter in filters { subjects.append(try await ModelSubject.open(harness.manager, filter: filter, limit: 10)) }
        return subjects
    }

    @Test(arguments: 0..<ScheduleSeeds.modelBatchCount)
    func randomSchedulesLoseNothingAndDoubleNothing(batch: Int) async throws {
        // A suite of its own for each schedule, as a test case per seed had: the failures
        // its witnesses record are that schedule's only.
        let crossed = await ScheduleSeeds.model.runCountingCrossings(batch: batch, of: ScheduleSeeds.modelBatchCount) {
            try await OutboxModelTests().runSchedule(seed: $0)
        }
        // Reads, writes (sends of both lanes) and the two kinds.
        if let count = crossed {
            #expect(count.reads > 0 && count.writes > 0 && count.acrossKinds > 0, "answers crossed in batch \(batch): \(count)")
        }
    }

    /// Runs one schedule; answers how many read and write answers its crossed-answers steps
    /// let through ahead of older ones.
    private func runSchedule(seed: UInt64) async throws -> AnswersCrossed {
        var random = SeededGenerator(seed: seed &+ 10_000)
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let attachment = try makeAttachment(in: dir)
        let policy = [MessageResendPolicy.none, .manual, .automatic][Int(seed % 3)]
        // The failed list's cap, drawn apart from the texts' tails (seed + 70,000).
        var limits = SeededGenerator(seed: seed &+ 110_000)
        let cap = SyncManagerOptions.failedListCap(using: &limits)
        var (harness, pages) = try await Harness.makeWrapped(
            seed: seed, databasePath: dir.path("cache.sqlite"),
            configure: {
                $0.applyScheduleSettings(policy: policy, using: &random)
                if let cap { $0.maxFailedMessageCountPerChannel = cap }
                // Capped far above what a schedule writes, so that only the synced-then-deleted
                // step's forced trim evicts (trims run only with a capacity).
                $0.messageStoreCapacity = 1_000_000
            }, wrapper: { PagesWithoutReqId(base: ChannelTokenRefusing(SendAnswerLostOffline(base: SendsRefused(base: $0)))) })
        let channelLogs = try #require(pages.base as? ChannelTokenRefusing)
        let lostAnswers = try #require(channelLogs.base as? SendAnswerLostOffline)
        let refusedSends = try #require(lostAnswers.base as? SendsRefused)
        let server = harness.server
        for index in 0..<Int.random(in: 0...40, using: &random) {
            try await server.post(.text("h\(index)"), from: "bob", to: Harness.channel)
        }
        let filters = [MessageFilter(), MessageFilter(kinds: [.image])]
        var subjects = try await open(harness, filters: filters)
        await harness.online()
        // The channel is cached as a channel list shows it, so that its preview (its last
        // message, with alice's queued edits and deletions laid over) is checked too.
        let channels = try await harness.manager.channelCollection()
        _ = try await channels.fetch()
        await channels.remove()
        var online = true
        var faulty = false
        var sent: [Sent] = []
        var withdrawn: Set<String> = []  // cancelled or deleted by the app
        // Cancelled before they ever failed: never on the service (API §4.6: what the
        // service may already hold cannot be cancelled).
        var cancelledUnsent: Set<String> = []
        var everFailed: Set<String> = []  // across relaunches: these may leave their lane's order
        var removedForCount: Set<String> = []  // by the failed list's limit, across relaunches
        var log: [String] = []
        // Edits, deletions and corrections come from a generator of their own, so that the
        // schedules of the other steps stay what they were for every seed.
        var writes = SeededGenerator(seed: seed &+ 20_000)
        var written = OwnWrites(seed: seed)
        var answersCrossed = AnswersCrossed()
        // Bursts queued behind a busy engine, alice's sends among others' messages: their
        // echoes arrive inside runs (issue 17), drawn apart too.
        var bursts = SeededGenerator(seed: seed &+ 30_000)
        // Writes refused for good while their message waits for its echo, drawn apart too.
        var refusals = SeededGenerator(seed: seed &+ 40_000)
        var locked: Set<Int64> = []  // stay locked for the whole run, so a write refused once never lands later
        // A collection fetching its pending and failed lists again mid-schedule (an app's
        // pull to refresh, or a screen shown again), drawn apart too: a resend in flight
        // then belongs to the failed list alone (API §4.3).
        var refetches = SeededGenerator(seed: seed &+ 50_000)
        // The awkward tails of sent texts, drawn apart too.
        var texts = SeededGenerator(seed: seed &+ 70_000)
        // A send stored by the service whose answer a broken connection lost, then (across a
        // relaunch or not) the app cancels it: drawn apart too.
        var cancels = SeededGenerator(seed: seed &+ 60_000)
        // Answers let through one by one in an order of their own, drawn apart too.
        var crossed = SeededGenerator(seed: seed &+ 100_000)
        // "bad" texts are refused from the first step on, however long it takes before the
        // step sets the faults (a burst's sends may reach the service first).
        await Self.applyFaults(server, faulty: false)
        // A service whose real-time echoes leave the `reqId` out, in a third of the
        // schedules, drawn apart: an echo that comes before a lost answer is the only sign
        // that the service stored the send.
        var echoes = SeededGenerator(seed: seed &+ 80_000)
        // Bob edits or deletes his message that is the channel's last, in any connection
        // state (offline, only the change logs at the reconnect tell), drawn apart too: the
        // channel's preview follows it.
        var moderation = SeededGenerator(seed: seed &+ 90_000)
        // A message the service refused, resent offline and cancelled, drawn apart too.
        var refusedCancels = SeededGenerator(seed: seed &+ 130_000)
        // A send stored with its answer lost, the app relaunched, then every try refused
        // until its retries are spent, drawn apart too.
        var lostThenRefused = SeededGenerator(seed: seed &+ 140_000)
        // The same loss, the message then deleted on another device while the app is away,
        // and the re-send answered after the channel's catch-up, drawn apart too.
        var lostThenDeleted = SeededGenerator(seed: seed &+ 150_000)
        // How the lost-then-refused step loses its answer (a timeout, or `.network` as the
        // HTTP services report a connection broken after the request went) and whether the
        // app is relaunched before the refusals, drawn apart too.
        var lostThenRefusedKind = SeededGenerator(seed: seed &+ 160_000)
        // A message synced in a channel never opened, deleted elsewhere while away, the app
        // perhaps relaunched, then the channel opened, drawn apart too.
        var syncedThenDeleted = SeededGenerator(seed: seed &+ 170_000)
        // Sends a message the service stores, its answer lost as the connection breaks;
        // answers its request id, or nil when the loss did not happen (an earlier send of
        // the lane's took the loss).
        func loseAnswerGoingOffline(
            step: Int, in channelURL: String = Harness.channel, reportedAs code: ChatServiceError.Code = .timeout
        ) async throws -> String? {
            await harness.settle()
            await lostAnswers.arm(goingOfflineOn: server, reportedAs: code)
            let message = try await harness.manager.sendMessage(.text("l\(step)"), channelURL: channelURL)
            // The checks follow the model's channel; another channel's step checks its own.
            if channelURL == Harness.channel { sent.append(Sent(reqId: message.reqId, lane: .text, permanent: false)) }
            await harness.settle()
            await lostAnswers.disarm()
            guard await lostAnswers.lost == message.reqId else { return nil }
            log.append("send stored, its answer lost going offline (\(code))")
            return message.reqId
        }
        // Closes the views (noting what they saw fail since the last check) and relaunches.
        func relaunchNotingFailures() async throws {
            log.append("relaunch")
            for subject in subjects {
                everFailed.formUnion(subject.recorder.failedReqIds)
                removedForCount.formUnion(subject.recorder.removedForCount)
                written.noteFailures(subject.recorder.failedOperations)
                await subject.collection.remove()
            }
            try await harness.relaunch()
            subjects = try await open(harness, filters: filters)
            await harness.manager.resumeSync()
        }
        // In a third of the schedules the channel change logs, which usually tell of such a
        // change at the reconnect, go unanswered from here on: the channel's message change
        // logs must tell it then.
        if Int.random(in: 0..<3, using: &moderation) == 0 {
            await channelLogs.failNextChangeLogs(.max)
            log.append("channel change logs unanswered")
        }
        if Int.random(in: 0..<3, using: &echoes) == 0 {
            await server.setEventsCarryReqId(false)
            log.append("echoes without reqId")
            // In half of those, history pages and change logs leave it out too: only
            // answers and look-ups by `reqId` tell this device's messages apart.
            if Bool.random(using: &echoes) {
                await pages.leaveReqIdsOut()
                log.append("pages without reqId")
            }
        }

        for step in 0..<40 {
            let subject = subjects.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                let media = Int.random(in: 0..<4, using: &random) == 0
                let permanent = Int.random(in: 0..<8, using: &random) == 0
                let tail = AwkwardText.tail(using: &texts)  // not on a "bad" text: the service refuses those by name
                let text = permanent ? "bad \(step)" : "s\(step)" + tail
                let params: MessageParams =
                    media ? .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: text) : .text(text)
                let message = try await harness.manager.sendMessage(params, channelURL: Harness.channel)
                sent.append(Sent(reqId: message.reqId, lane: params.kind.lane, permanent: permanent, text: text))
                log.append("send \(media ? "media" : "text")\(permanent ? " bad" : "")")
            case 30..<45:
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                log.append("fetch \(direction)")
                _ = try await subject.fetchCheckingPageSize(
                    direction, mayFallShort: faulty, context: "seed \(seed) step \(step) \(log.suffix(10))")
            case 45..<52:
                log.append("post by bob")
                try await server.post(.text("b\(step)"), from: "bob", to: Harness.channel)
            case 52..<58:
                if let target = try Self.modelOutbox(harness).randomElement(using: &random) {
                    // Settled since the last step: nothing moves the message before the cancel.
                    let stored = await server.everStored(reqId: target.reqId, in: Harness.channel)
                    do {
                        try await harness.manager.cancelMessage(reqId: target.reqId)
                        withdrawn.insert(target.reqId)
                        if !target.isInFailedList { cancelledUnsent.insert(target.reqId) }
                        log.append("cancel \(target.message.syncState)\(target.isInFailedList ? " (failed list)" : "")")
                        // Only a failed message may be cancelled once the service holds it (API §4.6).
                        #expect(
                            !stored || target.message.syncState == .failed,
                            "seed \(seed) step \(step): \(target.reqId), \(target.message.syncState), was cancelled while the service holds it: \(log.suffix(8))"
                        )
                    } catch let error as SyncManagerError {
                        // Only a message in flight may be refused, and only as an invalid parameter.
                        #expect(error.code == .invalidParameter)
                        log.append("cancel refused (\(target.message.syncState))")
                        await Self.checkRefusalMayBeStored(
                            error, target.reqId, server, context: "seed \(seed) step \(step): \(log.suffix(8))")
                    }
                }
            case 58..<65:
                if let target = try Self.modelOutbox(harness).filter({ $0.message.syncState == .failed && $0.origin == .outbox })
                    .randomElement(
                        using: &random)
                {
                    log.append("resend")
                    _ = try await harness.manager.resendMessage(reqId: target.reqId)
                }
            case 65..<72:
                faulty.toggle()
                log.append(faulty ? "faults on" : "faults off")
            case 72..<80:
                online.toggle()
                // Just before the reconnect, so that only change logs tell of it.
                if online, Bool.random(using: &moderation) {
                    let shown = try harness.manager.engine.store.channel(Harness.channel)?.lastMessage
                    try await Self.bobChangesTheLastMessage(server, shown: shown, step: step, random: &moderation, log: &log)
                }
                log.append(online ? "online" : "offline")
                await server.setOnline(online, for: "alice")
            case 80..<88:
                log.append("relaunch")
                for subject in subjects {
                    removedForCount.formUnion(subject.recorder.removedForCount)
                    await subject.collection.remove()
                }
                try await harness.relaunch()
                subjects = try await open(harness, filters: filters)
                await harness.manager.resumeSync()
            default:
                log.append("reset")
                try await subject.collection.resetViewpointTimestamp(.max)
            }
            if Int.random(in: 0..<3, using: &writes) == 0 {
                try await written.makeOne(step: step, harness: harness, random: &writes, log: &log, withdrawn: &withdrawn)
            }
            if Int.random(in: 0..<4, using: &moderation) == 0 {
                try await Self.bobChangesTheLastMessage(server, step: step, random: &moderation, log: &log)
            }
            if Int.random(in: 0..<5, using: &bursts) == 0 {
                var shape = ""
                try await harness.withEventsQueued {
                    for index in 0..<Int.random(in: 2...20, using: &bursts) {
                        if Int.random(in: 0..<4, using: &bursts) == 0 {
                            let message = try await harness.manager.sendMessage(.text("q\(step).\(index)"), channelURL: Harness.channel)
                            sent.append(Sent(reqId: message.reqId, lane: .text, permanent: false))
                            shape += "a"
                        } else {
                            try await server.post(.text("r\(step).\(index)"), from: "bob", to: Harness.channel)
                            shape += "b"
                        }
                    }
                }
                log.append("burst queued \(shape)")
            }
            if Int.random(in: 0..<6, using: &crossed) == 0 {
                // The step's draws from a generator of its own: how many answers got held
                // depends on the machine, and must not move this generator's later draws.
                var content = SeededGenerator(seed: crossed.next())
                let (crossedSends, crossings) = try await Self.crossedAnswers(
                    harness, subjects, attachment: attachment, step: step, written: &written, withdrawn: &withdrawn,
                    random: &content, log: &log)
                answersCrossed += crossings
                sent += crossedSends.map { Sent(reqId: $0.reqId, lane: $0.lane, permanent: false, text: $0.text) }
            }
            try await listsFetchedAgain(subjects, random: &refetches, log: &log)
            let before = "seed \(seed) step \(step): \(log.suffix(6))"
            if online, Int.random(in: 0..<6, using: &refusals) == 0 {
                let write = try await Self.refusedWriteWhileEchoHeld(
                    harness, subjects, step: step, faulty: faulty, locked: &locked, random: &refusals, log: &log, context: before)
                sent.append(Sent(reqId: write, lane: .text, permanent: false))
            }
            if online, Int.random(in: 0..<6, using: &cancels) == 0 {
                // The service stores the send; the answer is lost as the connection breaks.
                await harness.settle()
                await lostAnswers.arm(goingOfflineOn: server)
                let message = try await harness.manager.sendMessage(.text("c\(step)"), channelURL: Harness.channel)
                sent.append(Sent(reqId: message.reqId, lane: .text, permanent: false))
                await harness.settle()
                await lostAnswers.disarm()
                if let reqId = await lostAnswers.lost {
                    online = false
                    log.append("send stored, its answer lost going offline")
                    if Bool.random(using: &cancels) { try await relaunchNotingFailures() }
                    if let target = try harness.outbox().first(where: { $0.reqId == reqId }) {
                        do {
                            try await harness.manager.cancelMessage(reqId: reqId)
                            withdrawn.insert(reqId)
                            if !target.isInFailedList { cancelledUnsent.insert(reqId) }
                            log.append("cancel \(target.message.syncState)\(target.isInFailedList ? " (failed list)" : "")")
                        } catch let error as SyncManagerError {
                            #expect(error.code == .invalidParameter, "\(before)")
                            log.append("cancel refused (\(target.message.syncState))")
                            await Self.checkRefusalMayBeStored(error, reqId, server, context: before)
                        }
                    }
                }
            }
            if online, Int.random(in: 0..<6, using: &lostThenRefused) == 0 {
                // The service stores the send; the answer is lost as the connection breaks
                // (a timeout, or `.network`); the app may be relaunched; back online, every
                // try is refused until spent.
                let code: ChatServiceError.Code = Bool.random(using: &lostThenRefusedKind) ? .network : .timeout
                let relaunched = Bool.random(using: &lostThenRefusedKind)
                if let reqId = try await loseAnswerGoingOffline(step: step, reportedAs: code) {
                    if relaunched { try await relaunchNotingFailures() }
                    try await Self.refusedUntilSpent(
                        harness, reqId: reqId, refusing: refusedSends, failures: operationFailures,
                        faulty: faulty, locked: locked, context: before, log: &log)
                }
                online = await server.isOnline("alice")
            }
            if online, Int.random(in: 0..<6, using: &lostThenDeleted) == 0 {
                // As above, in a channel this device never opened, and alice deletes the
                // message on another device while away.
                let unopened = try await Self.newUnopenedChannel(harness, step: step)
                if let reqId = try await loseAnswerGoingOffline(step: step, in: unopened) {
                    try await Self.deletedElsewhere(harness, reqId: reqId, in: unopened, log: &log)
                    try await relaunchNotingFailures()
                    try await Self.reSentAfterDeletedElsewhere(
                        harness, reqId: reqId, in: unopened, faulty: faulty, locked: locked, context: before, log: &log)
                }
                online = await server.isOnline("alice")
            }
            if online, Int.random(in: 0..<6, using: &syncedThenDeleted) == 0 {
                let channelURL = try await Self.newUnopenedChannel(harness, step: step, named: "remembered")
                let relaunched = Bool.random(using: &syncedThenDeleted)
                let evicted = Bool.random(using: &syncedThenDeleted)
                if let reqId = try await Self.syncedThenDeletedWhileAway(
                    harness, in: channelURL, evicted: evicted, step: step, locked: locked, context: before, log: &log)
                {
                    if relaunched { try await relaunchNotingFailures() }
                    try await Self.openedAfterDeletedWhileAway(
                        harness, reqId: reqId, in: channelURL, faulty: faulty, locked: locked, context: before, log: &log)
                }
                online = await server.isOnline("alice")
            }
            if online, policy != .none, Int.random(in: 0..<6, using: &refusedCancels) == 0 {
                let made = try await Self.cancelAfterRefusal(harness, step: step, context: before, log: &log)
                sent.append(Sent(reqId: made.reqId, lane: .text, permanent: true, text: made.text))
                if made.cancelled { withdrawn.insert(made.reqId) }
                online = false
            }
            await Self.applyFaults(server, faulty: faulty, locked: locked)
            await harness.settle()
            for subject in subjects {
                everFailed.formUnion(subject.recorder.failedReqIds)
                removedForCount.formUnion(subject.recorder.removedForCount)
                written.noteFailures(subject.recorder.failedOperations)
            }
            written.noteFailures(operationFailures.operations)
            everFailed.formUnion(operationFailures.reqIds)  // dropped under `.none` too, seen by no list
            removedForCount.formUnion(operationFailures.droppedForLimits)
            try await check(
                harness, subjects, policy: policy, removedForCount: removedForCount, sent: sent, withdrawn: withdrawn,
                everFailed: everFailed, healthy: online && !faulty, seed: seed,
                step: step, log: log)
        }

        // Flush: a healthy connection, every failure resent, until nothing moves.
        await Self.applyFaults(server, faulty: false, locked: locked)
        await server.setOnline(true, for: "alice")
        await harness.settle()
        try await harness.resendFailedAndSettle(retryableOnly: true)
        for subject in subjects {
            everFailed.formUnion(subject.recorder.failedReqIds)
            removedForCount.formUnion(subject.recorder.removedForCount)
        }
        removedForCount.formUnion(operationFailures.droppedForLimits)
        let held = await server.messages(in: Harness.channel)
        let onServer = held.map(\.reqId).filter { !$0.isEmpty }
        let outbox = try Self.modelOutbox(harness)
        for message in sent {
            let copies = onServer.filter { $0 == message.reqId }.count
            let context =
                "seed \(seed) policy \(policy) cap \(cap.map(String.init) ?? "-") \(message.permanent ? "bad" : "good") message; \(log)"
            #expect(copies <= 1, "never doubled: \(context)")
            if let text = message.text, let copy = held.first(where: { $0.reqId == message.reqId }),
                !written.changedText(of: copy)
            {
                #expect(copy.text == text, "the service got the text as written: \(copy.text.debugDescription) \(context)")
            }
            let mayBeDropped = removedForCount.contains(message.reqId)
            // One that failed between the list read and the cancel was cancelled as failed.
            if cancelledUnsent.contains(message.reqId), !everFailed.contains(message.reqId) {
                #expect(copies == 0, "a message cancelled before it failed never reaches the service: \(context)")
            }
            if message.permanent {
                #expect(copies == 0, "refused for good: \(context)")
                let kept = outbox.contains { $0.reqId == message.reqId }
                let keptAsFailed = policy != .none && !withdrawn.contains(message.reqId)
                #expect(kept == keptAsFailed || (mayBeDropped && !kept), "kept as failed unless dropped or deleted: \(context)")
            } else if !withdrawn.contains(message.reqId) && policy != .none && !mayBeDropped {
                #expect(copies == 1, "nothing sent is lost: \(context)")
            }
        }
        #expect(outbox.allSatisfy { $0.message.syncState == .failed }, "nothing left pending: seed \(seed)")
        if let cap { #expect(outbox.count <= cap, "the failed list keeps at most \(cap): seed \(seed) \(log)") }
        // Edits that failed for good during the flush (a correction's follow-up among them).
        written.noteFailures(operationFailures.operations)
        // A correction goes with a message a failure or a cancel dropped; an earlier
        // attempt may have stored it (lost answers) with the text it carried.
        let droppedAfterFailing = everFailed.filter { policy == .none || withdrawn.contains($0) }.union(removedForCount)
        try await written.checkFinal(harness, droppedAfterFailing: droppedAfterFailing, context: "seed \(seed) policy \(policy): \(log)")
        await harness.manager.close()
        return answersCrossed
    }

    /// Bob edits or deletes his message that is the channel's last (`shown`: the one alice's
    /// cache shows as the last, if the service still holds it), if it is his.
    static func bobChangesTheLastMessage(
        _ server: SimulatedChatServer, shown: Message? = nil, step: Int, random: inout SeededGenerator, log: inout [String]
    ) async throws {
        var target = await server.messages(in: Harness.channel).first { $0.messageId == shown?.messageId }
        if target == nil { target = await server.channel(Harness.channel)?.lastMessage }
        guard let last = target, last.senderId == "bob" else { return }
        if Bool.random(using: &random) {
            _ = try await server.update(messageId: last.messageId, channelURL: Harness.channel, text: "bob edited \(step)")
            log.append("bob edits the last message")
        } else {
            try await server.delete(messageId: last.messageId, channelURL: Harness.channel)
            log.append("bob deletes the last message")
        }
    }

    /// A cancel refused as possibly stored (API §4.6: what the service may already hold
    /// cannot be cancelled) is right only if the service stored the message, or a request
    /// of it broke on its way (offline: the client cannot tell that from an answer lost).
    /// One the service only ever refused (a 503, a permanent error) stored nothing.
    static func checkRefusalMayBeStored(
        _ error: SyncManagerError, _ reqId: String, _ server: SimulatedChatServer, context: String
    ) async {
        guard error.message.contains(SyncEngine.mayAlreadyHoldIt) else { return }
        let unreached = await server.unreachedSendLog.contains(reqId)
        #expect(
            await server.everStored(reqId: reqId, in: Harness.channel) || unreached,
            "\(reqId) is refused a cancel as possibly stored, but the service never stored it: \(context)")
    }

    /// The outbox of the model's channel: a step that writes to a channel of its own (see
    /// ``newUnopenedChannel(_:step:named:)``) checks that channel itself.
    static func modelOutbox(_ harness: Harness) throws -> [OutboxEntry] {
        try harness.outbox().filter { $0.channelURL == Harness.channel }
    }

    /// Texts marked "bad" are refused for good, whether or not transient faults are on.
    static func applyFaults(_ server: SimulatedChatServer, faulty: Bool, locked: Set<Int64> = []) async {
        var plan = faulty ? FaultPlan(failRequestRate: 0.2, loseResponseRate: 0.2) : FaultPlan()
        plan.permanentErrorTexts = Set((0..<40).map { "bad \($0)" })
        plan.lockedMessageIds = locked
        await server.setFaults(plan)
    }

    private func check(
        _ harness: Harness, _ subjects: [ModelSubject], policy: MessageResendPolicy, removedForCount: Set<String>, sent: [Sent],
        withdrawn: Set<String>,
        everFailed: Set<String>, healthy: Bool, seed: UInt64, step: Int, log: [String]
    ) async throws {
        let context = "seed \(seed) step \(step): \(log.suffix(6))"
        let onServer = await harness.server.messages(in: Harness.channel)
        var seen: Set<String> = []
        for message in onServer where !message.reqId.isEmpty {
            #expect(seen.insert(message.reqId).inserted, "a reqId stored twice: \(context)")
        }
        // Lane FIFO: the messages of a lane that never failed reach the server in creation order.
        let arrival = Dictionary(onServer.enumerated().map { ($1.reqId, $0) }, uniquingKeysWith: { first, _ in first })
        for lane in SendLane.allCases {
            let order = sent.filter { $0.lane == lane && !everFailed.contains($0.reqId) }.compactMap { arrival[$0.reqId] }
            #expect(order == order.sorted(), "lane \(lane) out of order: \(context)")
        }
        let outbox = try Self.modelOutbox(harness)
        // `message(reqId:)` knows every message the app sent and did not withdraw, in any
        // connection state and across relaunches: in the outbox, cached, or answered and
        // awaiting its echo (API §4.3). Only a failure may drop one (policy `.none`, or the
        // failed list's count).
        for message in sent where !withdrawn.contains(message.reqId) {
            let mayBeDropped = (everFailed.contains(message.reqId) && policy == .none) || removedForCount.contains(message.reqId)
            if !mayBeDropped, await harness.manager.message(reqId: message.reqId) == nil {
                Issue.record("message(reqId:) forgot a message alice sent: \(message.reqId) \(context)")
            }
        }
        let ownReqIds = Dictionary(
            onServer.filter { !$0.reqId.isEmpty && $0.senderId == "alice" }.map { ($0.messageId, $0.reqId) },
            uniquingKeysWith: { first, _ in first })
        let awaitingAnswers = await harness.manager.engine.outbox.awaitingEcho
        let awaitingEcho = Set(awaitingAnswers.keys)
        await checkListedAlike(subjects, context: context)
        // The channel's preview shows alice's queued writes as the views do.
        let preview = try harness.manager.engine.store.channel(Harness.channel)?.lastMessage
        if let preview {
            try OwnWrites.checkShown(
                [preview], queued: harness.manager.engine.store.operations(), context: "the channel's last message, \(context)")
        }
        // Online on a healthy link, settled, nothing queued: the preview is the service's
        // last message, however its changes came (answers, events, change logs).
        if healthy, try harness.manager.engine.store.operations().isEmpty {
            let served = await harness.server.channel(Harness.channel)?.lastMessage
            #expect(
                preview?.messageId == served?.messageId && preview?.text == served?.text,
                "the channel shows \(preview?.messageId ?? 0) '\(preview?.text ?? "")', the service \(served?.messageId ?? 0) '\(served?.text ?? "")': \(context)"
            )
        }
        for subject in subjects {
            let succeeded = await checkInvariants(subject.collection, subject.recorder, context: context)
            let early = subject.recorder.failuresReportedBeforeTheirUndo
            #expect(early.isEmpty, "an edit was reported failed before it was undone: \(early) \(context)")
            let pending = await subject.collection.pendingMessages
            let failed = await subject.collection.failedMessages
            let inOutbox = Set(outbox.filter { subject.filter.matches($0.message) }.map(\.reqId))
            #expect(
                Set(pending.map(\.reqId) + failed.map(\.reqId)) == inOutbox.union(awaitingEcho.intersection(pending.map(\.reqId))),
                "the pending and failed lists are the outbox: \(context)")
            if policy == .manual {
                let unmarked = subject.recorder.reasonsWhenFailedAgain.filter { $0.reason != .updateResendFailed }
                #expect(unmarked.isEmpty, "under .manual a failed resend is reported as one: \(unmarked) \(context)")
            }
            let misplaced = listedPendingButFailed(pending, outbox: outbox)
            #expect(misplaced.isEmpty, "a failed message, resent or not, stays in the failed list: \(misplaced) \(context)")
            #expect(succeeded.allSatisfy(subject.filter.matches))
            try OwnWrites.checkShown(
                succeeded, pending: pending, failed: failed, awaiting: awaitingAnswers, queued: harness.manager.engine.store.operations(),
                context: context)
            // Online on a healthy link, settled: a message of this device that the service
            // holds and the view shows as succeeded keeps its `reqId`, and is not also
            // pending or failed (API §3.3, §3.3a), however its echo came. Not for one the
            // app cancelled (a failed message the service held after all: the device let
            // go of it), nor one dropped under `.none` by a failure (its look-up may have
            // gone unanswered) or by the failed list's count (let go as a cancel is: with
            // pages that leave the `reqId` out, seed 565 under load). Found: a send whose echo came while it was in flight and
            // whose last try was refused (a 503 after a lost answer) stood failed beside
            // its echo (seed 25 under the Thread Sanitizer, 295 of 600 under load).
            if healthy {
                let unsettled = Set(pending.map(\.reqId) + failed.map(\.reqId))
                for message in succeeded {
                    guard let reqId = ownReqIds[message.messageId], !withdrawn.contains(reqId),
                        !(policy == .none && everFailed.contains(reqId)), !removedForCount.contains(reqId)
                    else { continue }
                    #expect(
                        message.reqId == reqId && !unsettled.contains(reqId),
                        "\(reqId) is listed as succeeded (\(message.messageId) \(message.text)) with reqId '\(message.reqId)'\(unsettled.contains(reqId) ? " and also pending or failed" : ""): \(context)"
                    )
                }
            }
        }
    }
}
