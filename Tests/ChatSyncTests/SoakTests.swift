import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// The simulation soak: seeded schedules over three channels and four collections at
/// once, mixing alice's sends, cancels, resends, own edits and deletions with other
/// users' traffic, fault plans (failed requests, lost responses), offline periods,
/// pauses, viewpoint resets and relaunches on the same file. After every step the
/// guarantees of Sources/ChatSync/ChatSync.docc/Guarantees.md (Collection events, Outbox and order) are checked; at the end, every message alice sent
/// is on the server exactly once unless its policy says it failed or was dropped.
///
/// A failing schedule names its seed; `SOAK_SEED=N swift test --filter Soak` replays it alone.
@Suite("Simulation soak", .capturingLogs)
struct SoakTests {
    static let channels = [Harness.channel, "random", "team"]
    static let senders = ["bob", "carol"]
    /// Texts the server refuses for good.
    static let badTexts = Set((0..<30).map { "bad \($0)" })

    struct Sent {
        let reqId: String
        let channelURL: String
        let lane: SendLane
        let permanent: Bool
        /// The text alice sent (a caption for media), awkward tail included.
        var text = ""
    }

    struct Subject {
        let channelURL: String
        let model: ModelSubject
    }

    /// One collection per channel plus a media-only one on the first, each with its pending and failed lists loaded.
    func openSubjects(_ harness: Harness, failures: FailureLog) async throws -> [Subject] {
        await harness.manager.engine.setFailureWitness { failures.record($0) }
        await harness.manager.engine.setOperationFailureWitness { failures.record($0) }
        await harness.manager.engine.setHistoryDropWitness { failures.recordHistoryDrop($0) }
        await harness.manager.engine.setLimitDropWitness { failures.recordLimitDrop($0) }
        var plans = Self.channels.map { ($0, MessageFilter()) }
        plans.append((Harness.channel, MessageFilter(kinds: [.image])))
        var subjects: [Subject] = []
        for (channelURL, filter) in plans {
            let model = try await ModelSubject.open(harness.manager, channelURL: channelURL, filter: filter, limit: 8)
            subjects.append(Subject(channelURL: channelURL, model: model))
        }
        return subjects
    }

    /// Schedules run in this many parallel batches, each one seed after another: a test
    /// case per seed would start all of them at once, each with its database files open,
    /// and thousands of seeds would run the process out of file descriptors.
    static let batchCount = 8

    @Test(arguments: 0..<batchCount)
    func randomSchedulesKeepEveryPromise(batch: Int) async throws {
        let crossed = await ScheduleSeeds.soak.runCountingCrossings(batch: batch, of: Self.batchCount) {
            try await runSchedule(seed: $0)
        }
        // Reads, writes and the two kinds: answers let through ahead of others held before them.
        if let count = crossed {
            #expect(count.reads > 0 && count.writes > 0 && count.acrossKinds > 0, "answers crossed in batch \(batch): \(count)")
        }
    }

    /// Runs one schedule; answers how many read and write answers it let through ahead of older ones.
    private func runSchedule(seed: UInt64) async throws -> AnswersCrossed {
        var random = SeededGenerator(seed: seed &+ 1_000_000)
        var network = SeededGenerator(seed: seed &+ 2_000_000)
        var paths = SeededGenerator(seed: seed &+ 3_000_000)
        var writes = SeededGenerator(seed: seed &+ 4_000_000)
        // The small cache and the browsed channels (issue 16), from a generator of their own.
        var browsing = SeededGenerator(seed: seed &+ 7_000_000)
        // Screens that reappear (issue 18), from a generator of their own too.
        var screens = SeededGenerator(seed: seed &+ 10_000_000)
        // Bursts queued behind a busy engine (issue 17's runs), from a generator of their own too.
        var bursts = SeededGenerator(seed: seed &+ 11_000_000)
        // Change-log tokens the server stops honouring, in whatever state the connection and
        // the app are in, from a generator of their own too.
        var tokens = SeededGenerator(seed: seed &+ 12_000_000)
        // Connections that break and come back inside a queued burst, from a generator of their own too.
        var flaps = SeededGenerator(seed: seed &+ 13_000_000)
        // Collections fetching their pending and failed lists again, from a generator of their own too.
        var refetches = SeededGenerator(seed: seed &+ 17_000_000)
        // Answers made at once and arriving late, from a generator of their own too.
        var lateAnswers = SeededGenerator(seed: seed &+ 18_000_000)
        // Answers let through one by one in an order of their own, from a generator of its own too.
        var crossed = SeededGenerator(seed: seed &+ 22_000_000)
        // The cache cleared under the schedule, from a generator of its own too.
        var clears = SeededGenerator(seed: seed &+ 19_000_000)
        let capacity = Self.capacity(using: &browsing)
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let attachment = try makeAttachment(in: dir)
        let policy = MessageResendPolicy.allCases.randomElement(using: &random)!
        // A small failed list in half the schedules, from a generator of its own too.
        var limits = SeededGenerator(seed: seed &+ 20_000_000)
        let cap = SyncManagerOptions.failedListCap(using: &limits)
        // Awkward tails of sent texts (a NUL, combining marks, SQL wildcards...), drawn apart too.
        var texts = SeededGenerator(seed: seed &+ 21_000_000)
        var harness = try await Harness.make(seed: seed, databasePath: dir.path("cache.sqlite")) {
            $0.applyScheduleSettings(policy: policy, using: &random)
            $0.messageStoreCapacity = capacity
            if let cap { $0.maxFailedMessageCountPerChannel = cap }
        }
        let server = harness.server
        try await createBrowsedChannels(server, random: &browsing)
        // Small trim steps, so that collections open, fetch and move between them.
        await harness.manager.engine.setEvictionStepSize(Int.random(in: 1...40, using: &browsing))
        for channelURL in Self.channels.dropFirst() {
            try await server.createChannel(channelURL, members: ["alice", "bob", "carol"], name: channelURL)
        }
        for channelURL in Self.channels {
            for index in 0..<Int.random(in: 0...25, using: &random) {
                try await server.post(.text("h\(index)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
            }
        }
        // Refused texts are refused from the first step: a "bad" send of step 0 could
        // otherwise reach the server before the step's plan is set.
        await server.setFaults(FaultPlan(permanentErrorTexts: Self.badTexts))
        var state = SoakState()
        state.seed = seed
        state.failedListCap = cap
        state.policy = policy
        var subjects = try await openSubjects(harness, failures: state.failures)
        await harness.online()
        // The channels are cached as a channel list shows them, so that their previews
        // (last messages, with alice's queued edits and deletions laid over) are checked too.
        let channels = try await harness.manager.channelCollection()
        while try await channels.fetch() {}
        await channels.remove()
        let badTexts = Self.badTexts
        let context = { (step: Int, log: [String]) in
            "\(ScheduleSeeds.soak.describe(seed)) policy \(policy) step \(step): \(log.suffix(ProcessInfo.processInfo.environment["SOAK_LOG"] == nil ? 8 : log.count))"
        }

        for step in 0..<30 {
            let subject = subjects.randomElement(using: &random)!
            let channelURL = Self.channels.randomElement(using: &random)!
            let all = await server.messages(in: channelURL)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<24:
                let media = Int.random(in: 0..<4, using: &random) == 0
                let permanent = Int.random(in: 0..<8, using: &random) == 0
                // No tail on a "bad" text: the service refuses those by name.
                let text = permanent ? "bad \(step)" : "s\(step)" + AwkwardText.tail(using: &texts)
                let params: MessageParams =
                    media ? .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: text) : .text(text)
                let message = try await harness.manager.sendMessage(params, channelURL: channelURL)
                state.sent.append(
                    Sent(reqId: message.reqId, channelURL: channelURL, lane: params.kind.lane, permanent: permanent, text: text))
                state.log.append("send \(media ? "media" : "text")\(permanent ? " bad" : "") to \(channelURL)")
            case 24..<40:
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                state.log.append("fetch \(direction) \(subject.channelURL)")
                let hasMore = try await subject.model.fetchCheckingPageSize(
                    direction, mayFallShort: state.faulty, context: context(step, state.log))
                await fetched(harness, subject, direction, hasMore: hasMore, state: &state)
            case 40..<50:
                state.log.append("post to \(channelURL)")
                try await server.post(.text("o\(step)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
            case 50..<54:
                if let target = all.randomElement(using: &random) {
                    state.log.append("others edit \(target.messageId) in \(channelURL)")
                    try await server.update(messageId: target.messageId, channelURL: channelURL, text: "edit \(step)")
                    state.allowedTexts[MessageRef(target)]?.insert("edit \(step)")
                }
            case 54..<58:
                if let target = all.randomElement(using: &random) {
                    state.log.append("others delete \(target.messageId) in \(channelURL)")
                    state.withdrawn.insert(target.reqId)
                    try await server.delete(messageId: target.messageId, channelURL: channelURL)
                }
            case 58..<62:
                if let target = all.filter({ $0.senderId == "alice" }).randomElement(using: &random) {
                    try await ownEditOrDelete(target, step: step, harness: harness, random: &random, state: &state)
                } else if let waiting = try harness.outbox().filter({ $0.origin == .outbox && !$0.message.syncState.isPending })
                    .randomElement(using: &random)
                {
                    try await correctPending(waiting, step: step, harness: harness, state: &state)
                }
            case 62..<67:
                if let target = try harness.outbox().randomElement(using: &random) {
                    do {
                        try await harness.manager.cancelMessage(reqId: target.reqId)
                        state.withdrawn.insert(target.reqId)
                        if !target.isInFailedList { state.cancelledUnsent.insert(target.reqId) }
                        state.log.append("cancel \(target.message.syncState)\(target.isInFailedList ? " (failed list)" : "")")
                    } catch let error as SyncManagerError {
                        // Only a message in flight may be refused, and only as an invalid parameter.
                        #expect(error.code == .invalidParameter, "\(context(step, state.log))")
                        state.log.append("cancel refused (\(target.message.syncState))")
                    }
                }
            case 67..<72:
                let failed = try harness.outbox().filter { $0.message.syncState == .failed && $0.origin == .outbox }
                if let target = failed.randomElement(using: &random) {
                    state.log.append("resend")
                    _ = try await harness.manager.resendMessage(reqId: target.reqId)
                }
            case 72..<78:
                state.faulty.toggle()
                state.log.append(state.faulty ? "faults on" : "faults off")
            case 78..<85:
                state.online.toggle()
                state.log.append(state.online ? "online" : "offline")
                await server.setOnline(state.online, for: "alice")
            case 85..<89:
                state.running.toggle()
                state.log.append(state.running ? "resume" : "pause")
                if state.running { await harness.manager.resumeSync() } else { await harness.manager.pauseSync() }
            case 89..<95:
                state.log.append("relaunch")
                for subject in subjects { await subject.model.collection.remove() }
                try await harness.relaunch()
                subjects = try await openSubjects(harness, failures: state.failures)
                state.running = true
                await harness.manager.resumeSync()
            default:
                let target = Bool.random(using: &random) || all.isEmpty ? Int64.max : all.randomElement(using: &random)!.createdAt
                state.log.append("reset \(subject.channelURL) to \(target)")
                try await subject.model.collection.resetViewpointTimestamp(target)
                state.atNewest[ObjectIdentifier(subject.model.collection)] = nil
            }
            // A slow network, drawn from a generator of its own so that the main schedule
            // of a seed stays what it was: requests wait while things happen.
            if Int.random(in: 0..<8, using: &network) == 0 {
                try await slowNetwork(harness, attachment: attachment, random: &network, state: &state)
            }
            // The paths new users found broken (issue 12), also from a generator of their own.
            if Int.random(in: 0..<3, using: &paths) == 0 {
                try await rarePath(&harness, &subjects, attachment: attachment, random: &paths, state: &state)
            }
            // Races around alice's own writes (an answered message edited before its echo, an
            // app closed mid-upload), from a generator of their own too.
            if Int.random(in: 0..<6, using: &writes) == 0 {
                try await writeRace(&harness, &subjects, attachment: attachment, random: &writes, state: &state)
            }
            if Int.random(in: 0..<5, using: &bursts) == 0 {
                try await queuedBurst(harness, random: &bursts, flaps: &flaps, state: &state)
            }
            if Int.random(in: 0..<12, using: &tokens) == 0 {
                await server.expireMessageChangeLogTokens()
                state.log.append("change-log tokens expire")
            }
            if Int.random(in: 0..<8, using: &lateAnswers) == 0 {
                try await self.lateAnswers(harness, subjects, step: step, random: &lateAnswers, state: &state)
            }
            if Int.random(in: 0..<8, using: &crossed) == 0 {
                // The step's draws from a generator of its own: how many answers got held
                // depends on the machine, and must not move this generator's later draws.
                var content = SeededGenerator(seed: crossed.next())
                try await crossedAnswers(harness, subjects, attachment: attachment, step: step, random: &content, state: &state)
            }
            if Int.random(in: 0..<10, using: &clears) == 0 {
                try await cacheCleared(&harness, &subjects, random: &clears, state: &state)
            }
            if Int.random(in: 0..<3, using: &browsing) == 0 {
                try await browse(harness, random: &browsing, state: &state, context: context(step, state.log))
            }
            await reappearingScreen(subjects.map(\.model), random: &screens, log: &state.log)
            try await listsFetchedAgain(subjects.map(\.model), random: &refetches, log: &state.log)
            state.outageInForce = false
            state.faultsInForce = state.faulty
            var plan = state.faulty ? FaultPlan(failRequestRate: 0.2, loseResponseRate: 0.2) : FaultPlan()
            plan.permanentErrorTexts = badTexts
            await server.setFaults(plan)
            await harness.settle()
            for subject in subjects {
                state.everFailed.formUnion(subject.model.recorder.failedReqIds)
                state.failedOperations.formUnion(subject.model.recorder.failedOperations.map { MessageRef($0) })
            }
            state.failedOperations.formUnion(state.failures.operations.map { MessageRef($0) })
            state.everFailed.formUnion(state.failures.reqIds)
            for dropped in state.failures.drainHistoryDrops() {
                state.historyDropped.formUnion(state.sent.filter { dropped == nil || $0.channelURL == dropped }.map(\.reqId))
            }
            try await check(harness, subjects, state: state, context: context(step, state.log))
            // The watch learns deletions only where the engine surely knows them all: a step
            // settled online on a healthy link, every channel's change logs applied.
            var everywhere: [Message] = []
            var synced = state.online && state.running && !(state.faulty || state.faultsInForce || state.outageInForce)
            for channelURL in Self.channels {
                everywhere += await server.messages(in: channelURL)
                if synced { synced = await harness.manager.engine.changeLogsApplied(channelURL) }
            }
            state.deletions.check(
                subjects.map(\.model), settledOnline: synced, serverMessages: everywhere, context: context(step, state.log))
            await checkViewsAtNewest(harness, subjects, state: &state, context: context(step, state.log))
        }

        // Flush: a healthy connection, every retryable failure resent, until nothing moves.
        await server.setFaults(FaultPlan(permanentErrorTexts: badTexts))
        await server.setOnline(true, for: "alice")
        await harness.manager.resumeSync()
        await harness.settle()
        try await harness.resendFailedAndSettle(retryableOnly: true)
        try await checkFinal(harness, state: state, policy: policy, context: context(30, state.log))
        await harness.manager.close()
        return state.answersCrossed
    }

    /// What a schedule has done so far.
    struct SoakState {
        var sent: [Sent] = []
        /// Answers the crossed-answers step let through while an older one of their kind stayed held.
        var answersCrossed = AnswersCrossed()
        var withdrawn: Set<String> = []  // cancelled or deleted by the app
        /// Cancelled before they ever failed: never on the service (API §4.6: what the
        /// service may already hold cannot be cancelled).
        var cancelledUnsent: Set<String> = []
        var everFailed: Set<String> = []  // these may leave their lane's order
        /// The failed list's count limit per channel when the schedule set a small one.
        var failedListCap: Int?
        /// Messages whose channel's cached history was dropped after they were sent (a
        /// refused change-log token, a cleared cache): `message(reqId:)` forgot them with it.
        var historyDropped: Set<String> = []
        var policy = MessageResendPolicy.manual
        /// Deleted messages must not come back into a view, even for a moment.
        var deletions = DeletedMessageWatch()
        /// Every message the engine failed, in a channel with a view or not.
        let failures = FailureLog()
        var online = true
        var running = true
        var faulty = false
        var log: [String] = []
        /// Host-sent messages (see Guarantees) the host's own SDK stored on the server.
        var hostStored: Set<String> = []
        /// Per message alice edited: the texts it may end with (hers, or a later edit of
        /// another user, which may land after hers).
        var allowedTexts: [MessageRef: Set<String>] = [:]
        /// Messages alice deleted.
        var deletedByAlice: Set<MessageRef> = []
        /// Messages an edit or deletion of alice's failed for good on (told by the views).
        var failedOperations: Set<MessageRef> = []
        /// Messages alice corrected before they were sent: the text each must arrive with.
        var corrected: [String: String] = [:]
        /// Edits, deletions and corrections alice made: each makes at most one operation
        /// (a correction of a message the service already stored, a follow-up edit).
        var operationsAsked = 0
        /// Views that stand at the newest messages after a clear, with the key above which
        /// each must show its channel's newest message (see `checkViewsAtNewest`).
        var atNewest: [ObjectIdentifier: Watch] = [:]
        /// Spells of the relaunch paths' faults (every request lost or failed, or half of
        /// them lost), and whether one is in force (until the step ends).
        var outages = 0
        var outageInForce = false
        /// Whether the fault plan of the step (set at the end of the last one) fails requests.
        var faultsInForce = false
        /// The schedule's seed, for failure messages.
        var seed: UInt64 = 0
    }

    /// A message by channel and id.
    struct MessageRef: Hashable {
        let channelURL: String
        let messageId: Int64
        init(_ message: Message) { (channelURL, messageId) = (message.channelURL, message.messageId) }
        init(_ operation: OutboxOperation) { (channelURL, messageId) = (operation.channelURL, operation.messageId) }
    }

    /// Latency without real time: requests wait at the server's door while alice sends
    /// and other users post, edit and delete (their events still flow), then all go at once.
    private func slowNetwork(
        _ harness: Harness, attachment: String, random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        let server = harness.server
        await server.holdRequests()
        state.log.append("slow network:")
        for index in 0..<Int.random(in: 1...4, using: &random) {
            let channelURL = Self.channels.randomElement(using: &random)!
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let media = Int.random(in: 0..<4, using: &random) == 0
                let text = "slow \(state.log.count)-\(index)"
                let params: MessageParams =
                    media ? .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: text) : .text(text)
                let message = try await harness.manager.sendMessage(params, channelURL: channelURL)
                state.sent.append(Sent(reqId: message.reqId, channelURL: channelURL, lane: params.kind.lane, permanent: false))
                state.log.append("  send to \(channelURL)")
            case 1:
                try await server.post(.text("slow other \(index)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
                state.log.append("  post to \(channelURL)")
            default:
                if let target = await server.messages(in: channelURL).randomElement(using: &random) {
                    try await server.delete(messageId: target.messageId, channelURL: channelURL)
                    state.withdrawn.insert(target.reqId)
                    state.log.append("  others delete \(target.messageId) in \(channelURL)")
                }
            }
            for _ in 0..<Int.random(in: 0...20, using: &random) { await Task.yield() }
        }
        await server.releaseRequests()
    }

    /// Alice edits or deletes one of her messages on the server, in any connection state:
    /// it goes through the outbox. Refused (an invalid parameter) only when her cache
    /// does not hold the message or its deletion is queued.
    func ownEditOrDelete(
        _ target: Message, step: Int, harness: Harness, random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        let ref = MessageRef(target)
        do {
            if Bool.random(using: &random) {
                let text = "mine \(step)"
                state.log.append("alice edits \(target.messageId)")
                let shown = try await harness.manager.updateMessage(
                    messageId: target.messageId, channelURL: target.channelURL, text: text)
                #expect(shown.text == text && shown.isEditPending, "an edit is shown at once")
                state.operationsAsked += 1
                state.allowedTexts[ref] = [text]
            } else {
                state.log.append("alice deletes \(target.messageId)")
                try await harness.manager.deleteMessage(messageId: target.messageId, channelURL: target.channelURL)
                state.operationsAsked += 1
                state.withdrawn.insert(target.reqId)
                state.deletedByAlice.insert(ref)
            }
        } catch let error as SyncManagerError where error.code == .invalidParameter {
            let cached = try harness.manager.engine.store.message(channelURL: target.channelURL, messageId: target.messageId)
            #expect(
                cached == nil || state.deletedByAlice.contains(ref),
                "an edit or deletion of a cached message of hers is refused: \(error)")
            state.log.append("  refused: not cached or being deleted")
        }
    }

    /// Alice corrects a message that waits or failed, before it is sent (again).
    private func correctPending(_ entry: OutboxEntry, step: Int, harness: Harness, state: inout SoakState) async throws {
        guard !Self.badTexts.contains(entry.message.text) else { return }
        let text = "fixed \(step)"
        state.log.append("alice corrects \(entry.message.syncState) \(entry.reqId.prefix(4))")
        let corrected = try await harness.manager.updatePendingMessage(reqId: entry.reqId, text: text)
        #expect(corrected.text == text)
        state.corrected[entry.reqId] = text
        state.operationsAsked += 1
    }

    private func check(_ harness: Harness, _ subjects: [Subject], state: SoakState, context: String) async throws {
        let outbox = try harness.outbox()
        let awaitingEcho = Set(await harness.manager.engine.outbox.awaitingEcho.keys)
        var truth: [String: [Message]] = [:]
        for channelURL in Self.channels {
            let onServer = await harness.server.messages(in: channelURL)
            truth[channelURL] = onServer
            var seen: Set<String> = []
            for message in onServer where !message.reqId.isEmpty {
                #expect(seen.insert(message.reqId).inserted, "a reqId stored twice in \(channelURL): \(context)")
            }
            // Lane FIFO: the messages of a lane that never failed reach the server in creation order.
            let arrival = Dictionary(onServer.enumerated().map { ($1.reqId, $0) }, uniquingKeysWith: { first, _ in first })
            for lane in SendLane.allCases {
                let order = state.sent.filter { $0.channelURL == channelURL && $0.lane == lane && !state.everFailed.contains($0.reqId) }
                    .compactMap { arrival[$0.reqId] }
                if order != order.sorted() {
                    // Which messages, how often each reached the server, and where each is now.
                    let sends = await harness.server.sendLog.map(\.reqId)
                    let detail = state.sent.filter { $0.channelURL == channelURL && $0.lane == lane }.map { sent in
                        let entry = outbox.first { $0.reqId == sent.reqId }
                        let position = arrival[sent.reqId].map(String.init) ?? "-"
                        let now = entry.map { "\($0.message.syncState) in the outbox" } ?? "not in the outbox"
                        return "\(sent.reqId) at \(position), sent \(sends.count { $0 == sent.reqId }) times, \(now)"
                    }
                    let lines = detail.joined(separator: "\n")
                    Issue.record("lane \(lane) of \(channelURL) out of order: \(context)\n\(lines)")
                }
            }
        }
        #expect(harness.syncPassOverlaps.count == 0, "passes of one connection's reconnect sync overlapped: \(context)")
        // `message(reqId:)` knows every message of alice's that the service holds, in any
        // connection state, across relaunches and evictions (API §4.3), unless a failure
        // dropped it from the outbox (policy `.none`, or the failed list's count) or its
        // channel's history was dropped since (a cleared cache, a refused token).
        let held = Set(truth.values.joined().map(\.reqId))
        let failed = state.everFailed.union(state.failures.reqIds)
        for sent in state.sent
        where held.contains(sent.reqId) && !state.withdrawn.contains(sent.reqId) && !state.historyDropped.contains(sent.reqId) {
            if (failed.contains(sent.reqId) && state.policy == .none) || state.failures.droppedForLimits.contains(sent.reqId) { continue }
            if await harness.manager.message(reqId: sent.reqId) == nil {
                Issue.record("message(reqId:) forgot \(sent.reqId), which the service holds: \(context)")
            }
        }
        if state.online && state.running {
            // Nothing waits for ever: every lane ran dry or failed its messages, every
            // response that beat its echo met it, and every host-sent message the
            // service stored is resolved.
            let stuck = outbox.filter { $0.origin == .outbox && $0.message.syncState.isPending }.map(\.message.syncState)
            #expect(stuck.isEmpty, "a lane stopped with messages pending: \(context)")
            let operations = try harness.manager.engine.store.operations()
            #expect(operations.isEmpty, "a lane stopped with edits or deletions queued: \(operations) \(context)")
            #expect(awaitingEcho.isEmpty, "responses still wait for their echoes: \(context)")
            let unresolved = outbox.filter { state.hostStored.contains($0.reqId) }
            #expect(unresolved.isEmpty, "host-sent messages the service stored are still pending: \(context)")
            // What `message(reqId:)` answers of a message no longer in the outbox is what the
            // service holds (its text, or nothing once deleted; API.md §4.6), in the channels
            // this connection synced (the others are known as of their last sync). A message
            // alice deleted on another device before a relaunch, which its resend's answer
            // still names (`withdrawn`), is skipped: no change log tells of a message created
            // and deleted after the channel's token.
            let inOutbox = Set(outbox.map(\.reqId))
            let stored = Dictionary(truth.values.joined().map { ($0.reqId, $0) }, uniquingKeysWith: { first, _ in first })
            let engine = harness.manager.engine
            var synced: Set<String> = []
            for channelURL in Self.channels where await engine.changeLogsApplied(channelURL) { synced.insert(channelURL) }
            for sent in state.sent
            where !inOutbox.contains(sent.reqId) && synced.contains(sent.channelURL)
                && !state.withdrawn.contains(sent.reqId)
            {
                let answered = await harness.manager.message(reqId: sent.reqId)
                guard let answered else { continue }  // neither cached nor synced lately: nothing to say
                #expect(
                    answered.text == stored[sent.reqId]?.text && stored[sent.reqId] != nil,
                    "message(reqId: \(sent.reqId.prefix(4))) answers '\(answered.text.prefix(20))', the service holds '\(stored[sent.reqId]?.text.prefix(20) ?? "nothing")': \(context)"
                )
            }
        }
        for channelURL in Self.channels {
            await checkListedAlike(subjects.filter { $0.channelURL == channelURL }.map(\.model), context: context)
            // The channel's preview shows alice's queued writes as the views do.
            if let last = try harness.manager.engine.store.channel(channelURL)?.lastMessage {
                try OwnWrites.checkShown(
                    [last], queued: harness.manager.engine.store.operations(), context: "the last message of \(channelURL), \(context)")
            }
        }
        for subject in subjects {
            let model = subject.model
            let succeeded = await checkInvariants(model.collection, model.recorder, context: context)
            let early = model.recorder.failuresReportedBeforeTheirUndo
            #expect(early.isEmpty, "an edit was reported failed before it was undone: \(early) \(context)")
            let pending = await model.collection.pendingMessages
            let failed = await model.collection.failedMessages
            let inOutbox = Set(
                outbox.filter { $0.message.channelURL == subject.channelURL && model.filter.matches($0.message) }.map(\.reqId))
            #expect(
                Set(pending.map(\.reqId) + failed.map(\.reqId)) == inOutbox.union(awaitingEcho.intersection(pending.map(\.reqId))),
                "the pending and failed lists of \(subject.channelURL) are its outbox: \(context)")
            let misplaced = listedPendingButFailed(pending, outbox: outbox)
            #expect(misplaced.isEmpty, "a failed message, resent or not, stays in the failed list: \(misplaced) \(context)")
            #expect(succeeded.allSatisfy { model.filter.matches($0) && $0.channelURL == subject.channelURL }, "\(context)")
            if state.online && state.running {
                // Contiguous: between its ends the view holds exactly what the server holds.
                let expected = serverRange(truth[subject.channelURL] ?? [], model.filter, from: succeeded.first, to: succeeded.last)
                #expect(
                    succeeded.map(\.messageId) == expected.map(\.messageId),
                    "the view of \(subject.channelURL) \(model.filter) has a hole or a stray: \(context)")
                if succeeded.map(\.messageId) == expected.map(\.messageId) {
                    let stale = zip(succeeded, expected).filter { $0.text != $1.text || $0.isEditPending }
                    #expect(
                        stale.isEmpty, "the view of \(subject.channelURL) shows texts the server does not: \(stale.map(\.0)) \(context)")
                }
            }
        }
    }

    private func checkFinal(_ harness: Harness, state: SoakState, policy: MessageResendPolicy, context: String) async throws {
        let outbox = try harness.outbox()
        for channelURL in Self.channels {
            let onServer = await harness.server.messages(in: channelURL).map(\.reqId).filter { !$0.isEmpty }
            for message in state.sent where message.channelURL == channelURL {
                let copies = onServer.filter { $0 == message.reqId }.count
                let what = "\(message.permanent ? "bad" : "good") message \(message.reqId) to \(channelURL); \(context)"
                #expect(copies <= 1, "never doubled: \(what)")
                // A message that failed may have been dropped for the failed list's count.
                let mayBeDropped = state.failures.droppedForLimits.contains(message.reqId)
                // One that failed between the list read and the cancel was cancelled as failed.
                if state.cancelledUnsent.contains(message.reqId), !state.everFailed.contains(message.reqId) {
                    #expect(copies == 0, "a message cancelled before it failed never reaches the service: \(what)")
                }
                if message.permanent {
                    #expect(copies == 0, "refused for good: \(what)")
                    let kept = outbox.contains { $0.reqId == message.reqId }
                    let expected = policy != .none && !state.withdrawn.contains(message.reqId)
                    #expect(kept == expected || (mayBeDropped && !kept), "kept as failed unless dropped or withdrawn: \(what)")
                } else if !state.withdrawn.contains(message.reqId) && policy != .none && !mayBeDropped {
                    #expect(copies == 1, "nothing sent is lost: \(what)")
                }
            }
        }
        #expect(outbox.allSatisfy { $0.message.syncState == .failed }, "nothing left pending: \(context)")
        if let cap = state.failedListCap {
            let perChannel = Dictionary(grouping: outbox, by: \.channelURL).mapValues(\.count)
            #expect(perChannel.values.allSatisfy { $0 <= cap }, "the failed list keeps at most \(cap) per channel: \(context)")
        }
        #expect(try harness.manager.engine.store.operations().isEmpty, "no edit or deletion left: \(context)")
        // Exactly once: every try of an operation (after lost answers, failed requests,
        // relaunches) carries its one id, so the server never sees more ids than alice
        // asked for, and applies each once.
        let operationIds = await harness.server.operationRequests.keys.count
        #expect(operationIds <= state.operationsAsked, "\(operationIds) operation ids for \(state.operationsAsked) asked: \(context)")
        for channelURL in Self.channels {
            let onServer = Dictionary(
                await harness.server.messages(in: channelURL).map { ($0.messageId, $0) }, uniquingKeysWith: { first, _ in first })
            // Byte for byte: what alice sent is what the service holds, unless she corrected
            // it or anyone edited it since (an edit moves `updatedAt` past `createdAt`;
            // alice's edits and corrections are checked below).
            let byReqId = Dictionary(onServer.values.map { ($0.reqId, $0) }, uniquingKeysWith: { first, _ in first })
            for sent in state.sent where sent.channelURL == channelURL && !sent.text.isEmpty && state.corrected[sent.reqId] == nil {
                guard let message = byReqId[sent.reqId], message.updatedAt == message.createdAt,
                    state.allowedTexts[MessageRef(message)] == nil
                else { continue }
                // Compared first: the expectation would print both texts raw, and a NUL
                // in them cuts the report (its seed included) short.
                let intact = message.text.utf8.elementsEqual(sent.text.utf8)
                #expect(
                    intact,
                    "the service holds \(sent.reqId.prefix(4))'s text \(message.text.debugDescription.prefix(60)), sent \(sent.text.debugDescription.prefix(60)): \(context)"
                )
            }
            for (ref, allowed) in state.allowedTexts where ref.channelURL == channelURL && !state.failedOperations.contains(ref) {
                guard let message = onServer[ref.messageId] else { continue }  // deleted since, by someone
                #expect(allowed.contains(message.text), "alice's last edit of \(ref.messageId) holds: \(message.text) \(context)")
            }
            for ref in state.deletedByAlice where ref.channelURL == channelURL && !state.failedOperations.contains(ref) {
                #expect(onServer[ref.messageId] == nil, "alice's deletion of \(ref.messageId) is not lost: \(context)")
            }
            // A corrected message the app then cancelled owes no correction: an attempt made
            // before the relaunch may have stored it (its answer lost), and cancelling cannot
            // take that back, so the server keeps the text that attempt carried. So does one
            // the failed list's count dropped, or a failure dropped under `.none` (Guarantees:
            // Edits and deletions).
            let everFailed = state.everFailed.union(state.failures.reqIds)
            for (reqId, text) in state.corrected where !state.withdrawn.contains(reqId) {
                if state.failures.droppedForLimits.contains(reqId) || (policy == .none && everFailed.contains(reqId)) { continue }
                guard let message = onServer.values.first(where: { $0.reqId == reqId }) else { continue }
                #expect(
                    message.text == text || state.allowedTexts[MessageRef(message)] != nil,
                    "a corrected message arrives with its correction: \(context)")
            }
        }
    }
}

/// The request ids of every message the engine failed, told by its failure witness:
/// a view sees only the failures of its own channel, and the soak closes views.
final class FailureLog: Sendable {
    private let storage = LockedState<Set<String>>([])
    private let failedOperations = LockedState<[OutboxOperation]>([])
    func record(_ reqId: String) { storage.withLock { _ = $0.insert(reqId) } }
    var reqIds: Set<String> { storage.withLock { $0 } }
    /// An edit or deletion failed for good.
    func record(_ operation: OutboxOperation) { failedOperations.withLock { $0.append(operation) } }
    var operations: [OutboxOperation] { failedOperations.withLock { $0 } }

    /// Failed messages the engine removed for the failed list's limits, told by its
    /// limit-drop witness (the soak's views close, so their events miss some).
    private let limitDrops = LockedState<Set<String>>([])
    func recordLimitDrop(_ reqId: String) { limitDrops.withLock { _ = $0.insert(reqId) } }
    var droppedForLimits: Set<String> { limitDrops.withLock { $0 } }

    /// The channels whose cached history the engine dropped since the last drain (`nil`:
    /// every channel, a cleared cache), told by its history-drop witness.
    private let droppedHistories = LockedState<[String?]>([])
    func recordHistoryDrop(_ channelURL: String?) { droppedHistories.withLock { $0.append(channelURL) } }
    func drainHistoryDrops() -> [String?] {
        droppedHistories.withLock { drops in
            defer { drops.removeAll() }
            return drops
        }
    }
}
