import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// The soak's rare paths: the ones a new user walked and found broken (issue 12) that
/// the main schedule never took. They draw from a generator of their own, so adding them
/// left each seed's main schedule as it was.
extension SoakTests {
    func rarePath(
        _ harness: inout Harness, _ subjects: inout [Subject], attachment: String, random: inout SeededGenerator,
        state: inout SoakState
    ) async throws {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: try await relaunchWithFaultyReconciliation(&harness, &subjects, random: &random, state: &state)
        case 1: try await hostSend(harness, subjects, random: &random, state: &state)
        case 2:
            // A channel with a cache and no view through whatever comes next (reconnects,
            // others' edits and deletions); a later step opens it again.
            guard subjects.count > 1 else { return }
            let index = Int.random(in: 0..<subjects.count, using: &random)
            state.log.append("close the view of \(subjects[index].channelURL)")
            await subjects[index].model.collection.remove()
            subjects.remove(at: index)
        case 3:
            // A view opened in whatever state the connection is in, at the newest messages
            // or in history, sometimes never fetched, while the last step's work may still be
            // in flight (its events can reach the collection before the handler is set).
            let channelURL = Self.channels.randomElement(using: &random)!
            let all = await harness.server.messages(in: channelURL)
            let viewpoint = Bool.random(using: &random) || all.isEmpty ? Int64.max : all.randomElement(using: &random)!.createdAt
            let filter = Bool.random(using: &random) ? MessageFilter() : MessageFilter(kinds: [.text])
            let model = try await ModelSubject.open(
                harness.manager, channelURL: channelURL, filter: filter, viewpoint: viewpoint, limit: 8)
            subjects.append(Subject(channelURL: channelURL, model: model))
            let fetches = Int.random(in: 0...2, using: &random)
            state.log.append("open a view of \(channelURL) at \(viewpoint), \(fetches) fetches")
            for _ in 0..<fetches { _ = try await model.collection.fetchSucceededMessages(.previous) }
        case 4:
            // A message dated in the past (clock skew, a federated server): it lands inside
            // ranges the cache may already hold as complete.
            let channelURL = Self.channels.randomElement(using: &random)!
            guard let target = await harness.server.messages(in: channelURL).randomElement(using: &random) else { return }
            let at = target.createdAt - Int64.random(in: 0...2, using: &random)
            state.log.append("others post at \(at) in \(channelURL)")
            postingInThePast(channelURL, newest: await harness.server.messages(in: channelURL).last?.sortKey, state: &state)
            try await harness.server.post(.text("past"), from: Self.senders.randomElement(using: &random)!, to: channelURL, at: at)
        default:
            // Another user's burst while alice is away, then back.
            let channelURL = Self.channels.randomElement(using: &random)!
            let count = Int.random(in: 1...45, using: &random)
            state.log.append("pause, \(count) posts to \(channelURL), resume")
            await harness.manager.pauseSync()
            for index in 0..<count { try await harness.server.post(.text("away \(index)"), from: "bob", to: channelURL) }
            if state.running { await harness.manager.resumeSync() }
        }
    }

    /// Closes the app while a send is in flight, then relaunches into a reconciliation
    /// whose look-ups fail, lose their answers or find the service unreachable.
    private func relaunchWithFaultyReconciliation(
        _ harness: inout Harness, _ subjects: inout [Subject], random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        let server = harness.server
        let channelURL = Self.channels.randomElement(using: &random)!
        await server.holdRequests()
        for index in 0..<Int.random(in: 1...3, using: &random) {
            let message = try await harness.manager.sendMessage(.text("inflight \(index)"), channelURL: channelURL)
            state.sent.append(Sent(reqId: message.reqId, channelURL: channelURL, lane: .text, permanent: false))
        }
        // Wait (by turns, bounded) until a send is in flight: offline or paused, none goes.
        let manager = harness.manager
        _ = await eventually(turns: 2_000) {
            (try? manager.engine.store.outboxEntries().contains { $0.message.syncState == .syncing }) == true
        }
        for subject in subjects { await subject.model.collection.remove() }
        await manager.close()
        // What was in flight, read from the file once the killed app can change it no more
        // (the relaunched manager sends nothing before it resumes).
        try await harness.reopen()
        let inFlight = Set(try harness.outbox().filter { $0.message.syncState == .syncing }.map(\.reqId))
        await server.releaseRequests()
        // The killed app's sends reach the server before the relaunched app sends again
        // (one a fault turned away never arrives: then the wait runs out, so it counts turns
        // rather than waiting out the hang limit). Arriving later, one could land after the
        // next message of its lane, which no client can prevent.
        _ = await eventually(turns: 200_000) { Set(await server.sendLog.map(\.reqId)).isSuperset(of: inFlight) }
        // Sometimes alice deletes one of them on another device before this run subscribes:
        // a resend is then answered with a deleted message whose echo never comes.
        //
        // Fault 4 (with a deletion only): every look-up of the relaunch goes unanswered, and
        // so do the first checks of the resend's answer (soak seed 805, CI 2026-11-24). It
        // deletes the newest, whose answer is newer than anything this run has seen: only a
        // look-up can tell that its echo is not coming.
        let deletes = Bool.random(using: &random)
        let fault = Int.random(in: 0..<(deletes ? 5 : 4), using: &random)
        let stored = await server.messages(in: channelURL).filter { inFlight.contains($0.reqId) }
        var deleted: String?
        if deletes, let target = fault == 4 ? stored.last : stored.randomElement(using: &random) {
            try await server.delete(messageId: target.messageId, channelURL: channelURL)
            state.withdrawn.insert(target.reqId)
            deleted = target.reqId
            state.log.append("  alice deletes \(target.messageId) elsewhere before the relaunch")
        }
        var plan: FaultPlan
        switch fault {
        case 0: plan = FaultPlan(loseResponseRate: 1)
        case 1: plan = FaultPlan(failRequestRate: 1)
        case 2: plan = FaultPlan(loseResponseRate: 0.5)
        case 4: plan = FaultPlan(lostLookUpAnswers: SyncEngine.syncRetryLimit + Int.random(in: 1...3, using: &random))
        default: plan = FaultPlan()
        }
        plan.permanentErrorTexts = Self.badTexts
        let described = ["lost", "failed", "half lost", "offline", "lost, then the resend's checks; change-log tokens expire"][fault]
        state.log.append("relaunch with \(channelURL) in flight; look-ups \(described)")
        await server.setFaults(plan)
        if fault < 3 {  // lost, failed or half lost: until the step ends
            state.outages += 1
            state.outageInForce = true
        }
        if fault == 3 { await server.setOnline(false, for: "alice") }
        // With a change log to read, this run learns of the deletion before the resend.
        if fault == 4 { await server.expireMessageChangeLogTokens() }
        subjects = try await openSubjects(harness, failures: state.failures)
        state.running = true
        await harness.manager.resumeSync()
        await harness.settle()
        if fault == 4, let deleted, try harness.outbox().first(where: { $0.reqId == deleted })?.message.syncState == .failed {
            // Unconfirmed, it failed; the app resends it while the checks still go unanswered.
            // Retried, a check is answered before this settles: nothing more comes to end the
            // wait (the next steps may bring a newer message, so it is checked here).
            _ = try await harness.manager.resendMessage(reqId: deleted)
            await harness.settle()
            state.log.append("  resend \(deleted) while its checks go unanswered")
            let awaited = await harness.manager.engine.outbox.awaitingEcho.keys.contains(deleted)
            #expect(
                !(awaited && state.online),
                "still waits for the echo of a message deleted before the relaunch: \(ScheduleSeeds.soak.describe(state.seed)) \(state.log.suffix(8))"
            )
        }
        if fault == 3 { await server.setOnline(state.online, for: "alice") }
    }

    /// A message the host sends through its own SDK (Guarantees: Host-sent messages): appended as pending, sent by
    /// the host, its answer handed over before or after the real-time copy, which may
    /// lack the `reqId`.
    private func hostSend(
        _ harness: Harness, _ subjects: [Subject], random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        guard let subject = subjects.randomElement(using: &random) else { return }
        let server = harness.server
        let reqId = "host-\(state.log.count)"
        let pending = Message(
            reqId: reqId, channelURL: subject.channelURL, senderId: "alice", kind: .text, text: "via host",
            createdAt: SimulatedChatServer.epoch, syncState: .syncing)
        // Drawn apart, so the other draws keep their schedules: the host's SDK may send
        // before the app appends, and the echo, the answer or both may come first.
        var late = SeededGenerator(seed: UInt64(state.log.count) &* 0x9E37_79B9 &+ 7)
        if Int.random(in: 0..<3, using: &late) == 0 {
            try await hostSendAppendedLate(
                pending, subject, harness, answerFirst: Bool.random(using: &late), echoLate: Bool.random(using: &late), state: &state)
            return
        }
        try await subject.model.collection.appendMessage(pending)
        let withoutReqId = Bool.random(using: &random)
        let answerFirst = Bool.random(using: &random)
        // The host's SDK may lose the answer of a send the server stored: the host reports
        // a failure. Edits of the message (anyone's) later bring its reqId back.
        let answerLost = Int.random(in: 0..<4, using: &random) == 0
        await server.setEventsCarryReqId(!withoutReqId)
        if answerFirst { await server.holdEvents(for: "alice") }
        let request = SendMessageRequest(reqId: reqId, channelURL: subject.channelURL, kind: .text, text: "via host")
        do {
            let sent = try await server.service(for: "alice").sendMessage(request)
            if answerLost {
                // Failed as the host reported; its echo (when it carries the reqId and the
                // manager hears it), a sync or an edit that brings the reqId settles it, but
                // nothing promises when: a sync that failed for good waits for the next
                // connection, and an echo without the reqId settles nothing. So it is not
                // counted among the stored messages that must resolve at once.
                await subject.model.collection.handleSendMessageResponse(
                    pending, error: ChatServiceError.transient(.timeout, "the host's answer was lost"))
            } else {
                state.hostStored.insert(reqId)
                await subject.model.collection.handleSendMessageResponse(sent, error: nil)
            }
            state.log.append(
                "host send\(withoutReqId ? ", echo without reqId" : "")\(answerFirst ? ", answer first" : "")\(answerLost ? ", answer lost" : "")"
            )
        } catch {
            await subject.model.collection.handleSendMessageResponse(pending, error: error)
            state.log.append("host send failed")
        }
        await server.releaseEvents(for: "alice")
        await server.setEventsCarryReqId(true)
    }

    /// The host's SDK sends `pending` before the app appends it; the service's echo
    /// reaches alice before the append too, or (`echoLate`) after it, and when
    /// `answerFirst` the host hands over the answer before the append: the message is in
    /// no list twice, and nothing waits for an echo that came already.
    private func hostSendAppendedLate(
        _ pending: Message, _ subject: Subject, _ harness: Harness, answerFirst: Bool, echoLate: Bool, state: inout SoakState
    ) async throws {
        let (server, engine) = (harness.server, harness.manager.engine)
        let request = SendMessageRequest(reqId: pending.reqId, channelURL: pending.channelURL, kind: .text, text: pending.text)
        if echoLate { await server.holdEvents(for: "alice") }
        guard let sent = try? await server.service(for: "alice").sendMessage(request) else {
            await server.releaseEvents(for: "alice")
            state.log.append("host send failed before the append")
            return
        }
        let delivered = await server.deliveredEventCount(for: "alice")
        #expect(await eventually { await engine.handledEventCount >= delivered }, "the echo is handled")
        if answerFirst { await subject.model.collection.handleSendMessageResponse(sent, error: nil) }
        try await subject.model.collection.appendMessage(pending)
        if !answerFirst { await subject.model.collection.handleSendMessageResponse(sent, error: nil) }
        await server.releaseEvents(for: "alice")
        state.hostStored.insert(pending.reqId)
        state.log.append("host send, \(answerFirst ? "answer and " : "")echo \(echoLate ? "after" : "before") the append")
    }
}
