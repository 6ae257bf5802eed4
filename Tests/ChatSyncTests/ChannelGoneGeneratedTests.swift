import ChatSyncTesting
import Testing

@testable import ChatSync

/// One of alice's channels deleted, or left by her, at any point of a schedule: online
/// (a real-time event), offline or paused (learnt from the channel change logs when the
/// connection returns), or while the app is not running (learnt after the relaunch).
/// Her messages in it are answered, answered and awaiting their echo, stored with their
/// answer lost, or waiting; collections on it are open or not. One of them may be answered
/// only after the news of the end (its echo, with or without its request id, came before),
/// or be out when the app stops and found by the relaunch's look-up after the end: either
/// way it went with the channel, and is checked at once, before a later pass learns of the
/// end again.
///
/// Checked after settling online, and again after a relaunch: the channel leaves no
/// trace in the cache (no row, message, range, token or record of what synced there),
/// `message(reqId:)` answers none of its messages as synced, no answer awaits an echo
/// there, each collection open on it when it went was told, and the channel list drops
/// it. The other channel keeps everything: every message of alice's there is known.
@Suite("A channel gone, generated", .capturingLogs)
struct ChannelGoneGeneratedTests {
    static let seeds = ScheduleSeeds.channelGone
    static let gone = "gone"
    static let stays = "stays"

    @Test(arguments: 0..<2)
    func aChannelGoneLeavesNoTraceAndTheOthersKeepEverything(batch: Int) async {
        await Self.seeds.run(batch: batch, of: 2) { seed in try await Self.schedule(seed) }
    }

    /// How the news of the channel's end reaches alice.
    private enum Moment: CaseIterable {
        case online, offline, paused, appNotRunning
    }

    private static func schedule(_ seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let policy = MessageResendPolicy.allCases.randomElement(using: &random)!
        var (harness, delayedAnswers) = try await Harness.makeWrapped(
            seed: seed, databasePath: dir.path("cache.sqlite"),
            configure: {
                $0.messageResendPolicy = policy
                $0.messageCollectionCapacity = 200
                $0.messageStoreCapacity = Bool.random(using: &random) ? nil : 400
            },
            wrapper: { AnswerDelayed(base: SendAnswerLostOffline(base: $0)) })
        let lostAnswers = try #require(delayedAnswers.base as? SendAnswerLostOffline)
        let server = harness.server
        for channelURL in [gone, stays] {
            try await server.createChannel(channelURL, members: ["alice", "bob"], name: channelURL)
            for index in 0..<Int.random(in: 0...30, using: &random) {
                try await server.post(.text("h\(index)"), from: "bob", to: channelURL)
            }
        }
        await harness.online()
        let removal = Int.random(in: 1..<10, using: &random)
        let moment = Moment.allCases.randomElement(using: &random)!
        let leaves = Bool.random(using: &random)
        var log = ["policy \(policy), \(leaves ? "alice leaves" : "deleted") at step \(removal) \(moment)"]
        let context = { (log: [String]) in "\(seeds.describe(seed)): \(log)" }
        var sentTo: [String: [String]] = [gone: [], stays: []]
        // Which late news the channel's end meets (and how), drawn apart: the schedules of
        // the other steps stay what they were for every seed.
        var lateDraws = SeededGenerator(seed: seed &+ 90_000)
        var open = try await openCollections(harness, on: [gone, stays], random: &random)
        // Collections open on the channel when it went, and still open: they must be told.
        var toldOfTheEnd: [EventRecorder] = []
        var online = true
        var holding = false
        var isGone = false

        for step in 0..<14 {
            if step == removal {
                // Or while the relaunched app asks the service about its messages there.
                let endsDuringLookUp = moment == .appNotRunning && Bool.random(using: &random)
                var stoppedWithSendOut: String?
                switch moment {
                case .online: break
                case .offline:
                    online = false
                    await server.setOnline(false, for: "alice")
                case .paused: await harness.manager.pauseSync()
                case .appNotRunning:
                    if endsDuringLookUp, online, !holding {
                        // A send out when the app stops, which the service stores after: the
                        // relaunch asks the service about it before anything else goes.
                        await harness.settle()
                        await server.holdRequests()
                        let message = try await harness.manager.sendMessage(.text("q\(step)"), channelURL: gone)
                        sentTo[gone, default: []].append(message.reqId)
                        let engine = harness.manager.engine
                        _ = await eventually {
                            if await server.heldRequestCount > 0 { return true }
                            return await Harness.isSettled(engine, server: server)
                        }
                        if try engine.store.outboxEntry(reqId: message.reqId)?.message.syncState == .syncing {
                            stoppedWithSendOut = message.reqId
                            log.append("send to \(gone) out when the app stops")
                        }
                    }
                    for collection in open { await collection.collection.remove() }
                    open = []
                    await harness.manager.close()
                    await server.releaseRequests()
                    if let reqId = stoppedWithSendOut {
                        #expect(await eventually { await server.sendLog.contains { $0.reqId == reqId } }, "stored: \(context(log))")
                    }
                }
                var endedAlready = false
                if moment == .online, online, !holding {
                    let news = LateNews(
                        harness: harness, delayedAnswers: delayedAnswers, leaves: leaves, step: step, context: context)
                    switch Int.random(in: 0..<3, using: &lateDraws) {
                    case 0: endedAlready = try await news.hostAnswer(draws: &lateDraws, sentTo: &sentTo, log: &log)
                    case 1: endedAlready = try await news.echoLost(sentTo: &sentTo, log: &log)
                    default: endedAlready = try await news.sendAnswer(random: &random, sentTo: &sentTo, log: &log)
                    }
                }
                if moment == .offline || moment == .paused, Bool.random(using: &lateDraws) {
                    try await editBeforeTheNews(harness, shownIn: open, draws: &lateDraws, log: &log)
                }
                if !endedAlready, !endsDuringLookUp { try await end(on: server, leaving: leaves) }
                isGone = true
                if endedAlready {
                    let rows = try harness.manager.engine.store.syncedLatelyRows(channelURL: gone)
                    #expect(rows == 0, "answered after the end, recorded as synced: \(context(log))")
                }
                toldOfTheEnd += open.filter { $0.collection.channelURL == gone }.map(\.recorder)
                switch moment {
                case .online, .offline: break
                case .paused: await harness.manager.resumeSync()
                case .appNotRunning:
                    try await harness.reopen()
                    if endsDuringLookUp {
                        await delayedAnswers.arm(.lookUp, in: gone, meanwhile: endAndWait(harness, leaving: leaves))
                    }
                    open = try await openCollections(harness, on: [gone, stays], random: &random)
                    // The sync's passes, which learn of the end again, wait: the answer
                    // alone must not leave the message synced.
                    if stoppedWithSendOut != nil { await server.holdReadAnswers() }
                    await harness.manager.resumeSync()
                    if let reqId = stoppedWithSendOut {
                        let engine = harness.manager.engine
                        #expect(
                            await eventually { await !engine.outbox.awaitingReconciliation.contains(reqId) }, "looked up: \(context(log))")
                        let known = await harness.manager.message(reqId: reqId)
                        #expect(known?.syncState != .synced, "found by a look-up after the end, synced: \(context(log))")
                        await server.releaseReadAnswers()
                    }
                }
                await harness.settle()
                if endsDuringLookUp {
                    await delayedAnswers.disarm(.lookUp)
                    // Open when it ended: told, like those open before.
                    toldOfTheEnd += open.filter { $0.collection.channelURL == gone }.map(\.recorder)
                    if let named = await delayedAnswers.delayed[.lookUp] {
                        log.append("the relaunch's look-up in \(gone) answered after the channel's end (\(named.count) found)")
                        for reqId in named {
                            let known = await harness.manager.message(reqId: reqId)
                            #expect(known?.syncState != .synced, "found by a look-up after the end, synced: \(context(log))")
                        }
                        let rows = try harness.manager.engine.store.syncedLatelyRows(channelURL: gone)
                        #expect(rows == 0, "found by a look-up after the end, recorded as synced: \(context(log))")
                    } else {
                        log.append("no look-up in \(gone) after the relaunch: the channel ends now")
                        try await end(on: server, leaving: leaves)
                        await harness.settle()
                    }
                }
                continue
            }
            let channelURL = Bool.random(using: &random) ? gone : stays
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<28:
                // To the channel gone too, as an app that has not heard yet: the send fails.
                let message = try await harness.manager.sendMessage(.text("s\(step)"), channelURL: channelURL)
                sentTo[channelURL, default: []].append(message.reqId)
                log.append("send to \(channelURL)")
            case 28..<35:
                // Alice edits or deletes one of her cached messages: queued when the channel goes.
                let store = harness.manager.engine.store
                let cached = try await server.messages(in: channelURL).filter {
                    try $0.senderId == "alice" && store.message(channelURL: channelURL, messageId: $0.messageId) != nil
                }
                guard let target = cached.randomElement(using: &random) else { continue }
                do {
                    if Bool.random(using: &random) {
                        _ = try await harness.manager.updateMessage(
                            messageId: target.messageId, channelURL: channelURL, text: "edit \(step)")
                        log.append("alice edits \(target.messageId) in \(channelURL)")
                    } else {
                        try await harness.manager.deleteMessage(messageId: target.messageId, channelURL: channelURL)
                        log.append("alice deletes \(target.messageId) in \(channelURL)")
                    }
                } catch let error as SyncManagerError where error.code == .invalidParameter {
                    log.append("  refused (\(channelURL))")  // its deletion is queued, or the channel went
                }
            case 35..<45:
                // Answered, its echo held back: it waits for it when the channel goes.
                guard !isGone || channelURL == stays, online else { continue }
                if !holding {
                    holding = true
                    await server.holdEvents(for: "alice")
                }
                let message = try await harness.manager.sendMessage(.text("e\(step)"), channelURL: channelURL)
                sentTo[channelURL, default: []].append(message.reqId)
                await harness.settle()
                log.append("send to \(channelURL), echo held")
            case 45..<55:
                // Stored by the service, its answer and echo lost as the connection breaks.
                guard !isGone || channelURL == stays, online, !holding else { continue }
                await harness.settle()
                await lostAnswers.arm(goingOfflineOn: server)
                let message = try await harness.manager.sendMessage(.text("l\(step)"), channelURL: channelURL)
                sentTo[channelURL, default: []].append(message.reqId)
                await harness.settle()
                await lostAnswers.disarm()
                if await lostAnswers.lost != nil {
                    online = false
                    log.append("send to \(channelURL) stored, its answer lost going offline")
                }
            case 55..<65:
                guard !isGone || channelURL == stays else { continue }
                try await server.post(.text("b\(step)"), from: "bob", to: channelURL)
                log.append("bob posts to \(channelURL)")
            case 65..<78:
                online.toggle()
                if online, holding {
                    holding = false
                    await server.releaseEvents(for: "alice")
                }
                await server.setOnline(online, for: "alice")
                log.append(online ? "online" : "offline")
            case 78..<88:
                guard let subject = open.randomElement(using: &random) else { continue }
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                log.append("fetch \(direction) in \(subject.collection.channelURL)")
                do {
                    _ = try await subject.collection.fetchSucceededMessages(direction)
                } catch {
                    log.append("  threw \(error)")
                }
            default:
                log.append("relaunch")
                for collection in open { await collection.collection.remove() }
                toldOfTheEnd = []  // closed before the news came, perhaps: nothing to tell
                try await harness.relaunch()
                // Also on the channel gone, as a stale screen or link would: it notes no use of it.
                open = try await openCollections(harness, on: [gone, stays], random: &random)
                await harness.manager.resumeSync()
            }
            await harness.settle()
        }
        if holding { await server.releaseEvents(for: "alice") }
        await server.setOnline(true, for: "alice")
        await harness.manager.resumeSync()
        await harness.settle()
        try await harness.resendFailedAndSettle(retryableOnly: true)

        try await checkNoTrace(harness, sentTo: sentTo, context: context(log))
        for recorder in toldOfTheEnd {
            #expect(recorder.events.contains(.channelRemoved(gone)), "a collection open on the channel is told: \(context(log))")
        }
        // Every edit has landed or failed for good: a collection shows none as pending,
        // also on the channel gone, whose confirmed versions left with its history.
        for subject in open {
            let stillPending = await subject.collection.succeededMessages.filter(\.isEditPending).map(\.messageId)
            #expect(
                stillPending.isEmpty,
                "\(subject.collection.channelURL) shows edits as pending after all settled: \(stillPending) \(context(log))")
        }
        let list = try await harness.manager.channelCollection()
        while try await list.fetch() {}
        let listed = await list.channels.map(\.channelURL)
        #expect(!listed.contains(gone) && listed.contains(stays), "the list drops the channel only: \(listed) \(context(log))")
        await list.remove()
        for collection in open { await collection.collection.remove() }
        try await harness.relaunch()
        try await checkNoTrace(harness, sentTo: sentTo, context: "after a relaunch: " + context(log))
        await harness.manager.close()
    }

    /// Alice edits one of her messages in the channel that an open collection shows, just
    /// before it ends while the news cannot reach her: the edit waits, and once the news
    /// has taken the channel's history from the cache, its refusal has no confirmed
    /// version to bring back (adversarial tester F1).
    private static func editBeforeTheNews(
        _ harness: Harness, shownIn open: [(collection: MessageCollection, recorder: EventRecorder)],
        draws: inout SeededGenerator, log: inout [String]
    ) async throws {
        var shown: [Message] = []
        for subject in open where subject.collection.channelURL == gone {
            shown += await subject.collection.succeededMessages.filter { $0.senderId == "alice" }
        }
        guard let target = shown.randomElement(using: &draws) else { return }
        do {
            _ = try await harness.manager.updateMessage(messageId: target.messageId, channelURL: gone, text: "last word")
            log.append("alice edits \(target.messageId) in \(gone), shown, before the news of the end")
        } catch let error as SyncManagerError where error.code == .invalidParameter {
            log.append("  refused (its deletion is queued)")
        }
    }

    /// The channel ends for alice: deleted, or left by her.
    private static func end(on server: SimulatedChatServer, leaving: Bool) async throws {
        if leaving { try await server.removeMember("alice", from: gone) } else { try await server.deleteChannel(gone) }
    }

    /// The channel's end, run while an answer to alice waits: it ends, and her manager
    /// handles every event the server delivered to her (the news of the end) before the
    /// answer comes (a wait on a condition, bounded only as a last resort).
    private static func endAndWait(_ harness: Harness, leaving: Bool) -> @Sendable () async throws -> Void {
        let (engine, server) = (harness.manager.engine, harness.server)
        return {
            try await end(on: server, leaving: leaving)
            let handled = await eventually {
                await engine.connection.handledEventCount >= server.deliveredEventCount(for: "alice")
            }
            #expect(handled, "the manager handles the news of the end")
        }
    }

    /// The channel's end meeting news of one of alice's messages that is still on its way,
    /// at the removal step of an online schedule. Each variant ends the channel itself,
    /// checks at once (before a later pass learns of the end again) that the message is
    /// not answered as synced, and answers whether the channel ended.
    private struct LateNews {
        let harness: Harness
        let delayedAnswers: AnswerDelayed
        let leaves: Bool
        let step: Int
        let context: ([String]) -> String
        var server: SimulatedChatServer { harness.server }

        /// The app's own SDK sends a message the app appends; the service stores it, its
        /// echo comes without its request id, the channel ends, and only then does the app
        /// hand over the answer (or, two tasks of the app racing, append the message after
        /// handing the answer over before the end).
        func hostAnswer(draws: inout SeededGenerator, sentTo: inout [String: [String]], log: inout [String]) async throws -> Bool {
            let reqId = "host-\(step)"
            let answerFirst = Bool.random(using: &draws)
            let hostView = try await harness.manager.messageCollection(channelURL: gone, limit: 10)
            let pending = Message(
                reqId: reqId, channelURL: gone, senderId: "alice", text: "h\(step)", createdAt: 0, syncState: .syncing)
            if !answerFirst { try await hostView.appendMessage(pending) }
            sentTo[gone, default: []].append(reqId)
            if Bool.random(using: &draws) { try await deletionNamingAnotherChannel(through: hostView, log: &log) }
            await server.setEventsCarryReqId(false)
            let stored = try await server.service(for: "alice").sendMessage(
                SendMessageRequest(reqId: reqId, channelURL: gone, kind: .text, text: "h\(step)"))
            await harness.settle()
            await server.setEventsCarryReqId(true)
            if answerFirst { await hostView.handleSendMessageResponse(stored, error: nil) }
            try await end(on: server, leaving: leaves)
            await harness.settle()
            if answerFirst {
                try await hostView.appendMessage(pending)
            } else {
                await hostView.handleSendMessageResponse(stored, error: nil)
            }
            await harness.settle()
            await hostView.remove()
            let known = await harness.manager.message(reqId: reqId)
            #expect(known?.syncState != .synced, "handed over after the end, still synced: \(context(log))")
            log.append(
                answerFirst
                    ? "the app's own send to \(gone) answered before the channel's end, appended after it"
                    : "the app's own send to \(gone) answered after the channel's end")
            return true
        }

        /// The app's SDK tells of a deletion in a channel URL that holds a NUL after the other
        /// channel's URL: refused, it deletes nothing there (GRDB would bind the URL cut at
        /// the NUL, and the other channel's cached message would go unseen by its views).
        private func deletionNamingAnotherChannel(through view: MessageCollection, log: inout [String]) async throws {
            let store = harness.manager.engine.store
            let cached = try await server.messages(in: stays).filter {
                try store.message(channelURL: stays, messageId: $0.messageId) != nil
            }
            guard var named = cached.last else { return }
            log.append("the app's SDK deletes \(named.messageId) naming \(stays) with a NUL after it")
            named.channelURL = stays + "\u{0}x"
            do {
                try await view.deleteMessage(named)
                Issue.record("a channel URL with a NUL was taken: \(context(log))")
            } catch let error as SyncManagerError {
                #expect(error.code == .invalidParameter, "refused as bad input: \(context(log))")
            }
            #expect(try store.message(channelURL: stays, messageId: named.messageId) != nil, "nothing deleted: \(context(log))")
        }

        /// The service stores and answers a send to the channel, but its echo is lost on its
        /// way; then the channel ends: nothing is left awaiting it. A collection shows the
        /// channel's newest messages, so that the answer waits for its echo.
        func echoLost(sentTo: inout [String: [String]], log: inout [String]) async throws -> Bool {
            let liveView = try await harness.manager.messageCollection(channelURL: gone, limit: 10)
            _ = try await liveView.fetchSucceededMessages(.previous)
            await harness.settle()
            await server.loseNextMessageEvent(from: "alice", in: gone, to: "alice")
            let message = try await harness.manager.sendMessage(.text("x\(step)"), channelURL: gone)
            sentTo[gone, default: []].append(message.reqId)
            await harness.settle()
            await server.stopLosingMessageEvents()
            let awaited = await harness.manager.engine.outbox.awaitingEcho[message.reqId] != nil
            try await end(on: server, leaving: leaves)
            await harness.settle()
            await liveView.remove()
            log.append("send to \(gone) answered, its echo lost\(awaited ? " while awaited" : ""), then the channel's end")
            #expect(awaited, "the answer waits for its echo in a live channel: \(context(log))")
            let awaiting = await harness.manager.engine.outbox.awaitingEcho.values.filter { $0.channelURL == gone }
            #expect(awaiting.isEmpty, "an echo is awaited from the channel gone: \(context(log))")
            let known = await harness.manager.message(reqId: message.reqId)
            #expect(known?.syncState != .synced, "answered before the end, its echo lost, still synced: \(context(log))")
            return true
        }

        /// The service stores a send to the channel, the channel ends, and only then does
        /// the answer come: the message went with the channel. Its echo comes first;
        /// without its request id (as many services send it) nothing ties it to the
        /// outbox, and only the answer resolves the send. Answers whether an answer waited
        /// (the lane may not have sent).
        func sendAnswer(random: inout SeededGenerator, sentTo: inout [String: [String]], log: inout [String]) async throws -> Bool {
            let echoCarriesReqId = Bool.random(using: &random)
            await server.setEventsCarryReqId(echoCarriesReqId)
            await delayedAnswers.arm(.send, in: gone, meanwhile: endAndWait(harness, leaving: leaves))
            let message = try await harness.manager.sendMessage(.text("r\(step)"), channelURL: gone)
            sentTo[gone, default: []].append(message.reqId)
            await harness.settle()
            await delayedAnswers.disarm(.send)
            await server.setEventsCarryReqId(true)
            // The answer that waited may be an earlier send's of the same lane: the channel
            // ended all the same, and that message is the one to check.
            let answeredLate = await delayedAnswers.delayed[.send] ?? []
            for reqId in answeredLate {
                let known = await harness.manager.message(reqId: reqId)
                #expect(known?.syncState != .synced, "answered after the end, still synced: \(context(log))")
            }
            if !answeredLate.isEmpty {
                log.append(
                    "send to \(gone) stored, answered after the channel's end, echo \(echoCarriesReqId ? "with" : "without") its reqId"
                )
            }
            return !answeredLate.isEmpty
        }
    }

    private static func openCollections(
        _ harness: Harness, on channelURLs: [String], random: inout SeededGenerator
    ) async throws -> [(collection: MessageCollection, recorder: EventRecorder)] {
        var open: [(collection: MessageCollection, recorder: EventRecorder)] = []
        for channelURL in channelURLs where Bool.random(using: &random) {
            let collection = try await harness.manager.messageCollection(channelURL: channelURL, limit: 10)
            let recorder = EventRecorder()
            await collection.setHandler(recorder)
            do {
                _ = try await collection.fetchSucceededMessages(.previous)
            } catch let error as ChatServiceError where channelURL == gone {
                _ = error  // gone already: the service refuses (a non-member, or no such channel)
            }
            open.append((collection, recorder))
        }
        return open
    }

    /// The gone channel left nothing behind; the channel that stays kept every message of
    /// alice's that its service holds.
    private static func checkNoTrace(_ harness: Harness, sentTo: [String: [String]], context: String) async throws {
        let store = harness.manager.engine.store
        #expect(try store.channel(gone) == nil, "the channel's row is gone: \(context)")
        #expect(try store.historyRows(channelURL: gone) == 0, "the channel's history is gone: \(context)")
        #expect(try store.syncedLatelyRows(channelURL: gone) == 0, "the record of the channel is gone: \(context)")
        for reqId in sentTo[gone] ?? [] {
            let known = await harness.manager.message(reqId: reqId)
            #expect(known?.syncState != .synced, "a message of the channel answered as synced: \(reqId) \(context)")
        }
        #expect(try store.operations().filter { $0.channelURL == gone }.isEmpty, "an edit or deletion waits for the channel: \(context)")
        let awaiting = await harness.manager.engine.outbox.awaitingEcho.values.filter { $0.channelURL == gone }
        #expect(awaiting.isEmpty, "an answer awaits an echo from the channel: \(context)")
        let onServer = await harness.server.messages(in: stays)
        for reqId in sentTo[stays] ?? [] {
            guard let held = onServer.first(where: { $0.reqId == reqId }) else { continue }
            let known = await harness.manager.message(reqId: reqId)
            #expect(known?.syncState == .synced && known?.text == held.text, "the other channel's message is known: \(context)")
        }
    }
}
