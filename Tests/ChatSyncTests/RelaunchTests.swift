import ChatSyncTesting
import Clocks
import Foundation
import GRDB
import Testing

@testable import ChatSync

@Suite("Relaunch and host-sent messages", .capturingLogs)
struct RelaunchTests {
    /// Rewrites outbox states as a crash would have left them.
    private func setStates(_ path: String, _ states: [String: SyncState]) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            for (reqId, state) in states {
                try db.execute(sql: "UPDATE outbox SET state = ? WHERE req_id = ?", arguments: [state.rawValue, reqId])
            }
        }
        try queue.close()
    }

    /// Found by the crash-kill soak: automatic resends lived in memory only, so a message
    /// that failed in a run killed before its resend was due stayed failed for good.
    @Test(.timeLimit(.minutes(10)))
    func automaticResendsPendingWhenTheAppDiedAreScheduledAgain() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let clock = TestClock()
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) {
            $0.clock = clock
            $0.messageResendPolicy = .automatic
            $0.sendRetryLimit = 0
        }
        await harness.online()
        await harness.server.setFaults(FaultPlan(failRequestRate: 1))
        let doomed = try await harness.manager.sendMessage(.text("retry me after a relaunch"), channelURL: Harness.channel)
        #expect(await eventually { (try? harness.outbox().first?.message.syncState) == .failed })
        // The app is killed before the resend 2 s later; the next run starts healthy.
        // It gets a clock of its own: the killed run's resend sleeper leaves the old
        // clock only when its cancelled task next runs, so on a shared clock the check
        // below could see that stale sleeper, and the advance could pass before the new
        // run's sleeper registered (a sleeper registered at its own deadline never wakes).
        let nextRunClock = TestClock()
        harness.options.clock = nextRunClock
        try await harness.relaunch()
        await harness.server.setFaults(FaultPlan())
        await harness.manager.resumeSync()
        #expect(await sleeperRegistered(on: nextRunClock), "the resend is scheduled again")
        #expect(await harness.server.messages(in: Harness.channel).isEmpty, "not before its delay")
        await nextRunClock.advance(by: .seconds(2))
        // The outcome, not idleness (on a TestClock another sleeper may still wait for
        // time), and event-driven: the message's own stream ends once it is synced. A
        // budget of scheduler turns ran out here when the whole suite loaded both cores.
        var last: SyncState?
        for await message in harness.manager.observeMessage(reqId: doomed.reqId) { last = message.syncState }
        #expect(last == .synced)
        #expect(try harness.outbox().isEmpty)
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [doomed.reqId])
    }

    @Test(arguments: [MessageResendPolicy.manual, .automatic])
    func inFlightMessagesAreReconciledByReqIdExactlyOnce(policy: MessageResendPolicy) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.messageResendPolicy = policy }
        let waiting = try await harness.manager.sendMessage(.text("waiting"), channelURL: Harness.channel)
        let applied = try await harness.manager.sendMessage(.text("applied, response lost"), channelURL: Harness.channel)
        let neverApplied = try await harness.manager.sendMessage(.text("never applied"), channelURL: Harness.channel)
        await harness.manager.close()
        // The app died while the last two were in flight; the server had stored one of them.
        try setStates(harness.path!, [applied.reqId: .syncing, neverApplied.reqId: .syncing])
        _ = try await harness.server.service(for: "alice").sendMessage(
            SendMessageRequest(reqId: applied.reqId, channelURL: Harness.channel, kind: .text, text: applied.text))

        try await harness.relaunch()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        try await collection.fetchPendingMessages()
        #expect(await collection.pendingMessages.map(\.reqId) == [waiting.reqId, applied.reqId, neverApplied.reqId])
        await harness.online()
        let onServer = await harness.server.messages(in: Harness.channel).map(\.reqId)
        let sends = await harness.server.sendLog.map(\.reqId)
        #expect(sends.filter { $0 == applied.reqId }.count == 1, "found by look-up, never sent again")
        #expect(sends.filter { $0 == waiting.reqId }.count == 1)
        switch policy {
        case .automatic:
            #expect(Set(onServer) == [waiting.reqId, applied.reqId, neverApplied.reqId])
            #expect(onServer.count == 3, "each exactly once")
            #expect(try harness.outbox().isEmpty)
        default:
            #expect(onServer == [applied.reqId, waiting.reqId])
            let failed = try #require(try harness.outbox().first)
            #expect(
                failed.reqId == neverApplied.reqId && failed.message.syncState == .failed && failed.message.failure?.isRetryable == true)
            #expect(await collection.failedMessages.map(\.reqId) == [neverApplied.reqId])
            _ = try await harness.manager.resendMessage(reqId: neverApplied.reqId)
            await harness.settle()
            #expect(await harness.server.messages(in: Harness.channel).map(\.reqId).filter { $0 == neverApplied.reqId }.count == 1)
        }
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await harness.manager.message(reqId: applied.reqId)?.syncState == .synced)
    }

    @Test func reconciliationAsksInBatchesOfAHundred() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.maxFailedMessageCountPerChannel = 1000 }
        var states: [String: SyncState] = [:]
        for index in 0..<250 {
            states[try await harness.manager.sendMessage(.text("m\(index)"), channelURL: Harness.channel).reqId] = .syncing
        }
        await harness.manager.close()
        try setStates(harness.path!, states)
        try await harness.relaunch()
        await harness.online()
        #expect(await harness.server.requestCount <= 3 + 2, "three look-ups, plus the change-log token")
        #expect(try harness.outbox().count == 250)
        #expect(try harness.outbox().allSatisfy { $0.message.syncState == .failed })
    }

    @Test func aHostSentMessageIsResolvedByReqIdAfterARelaunch() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.messageResendPolicy = .automatic }
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let sentByHost = Message(
            reqId: "host-1", channelURL: Harness.channel, senderId: "alice", text: "via my SDK", createdAt: 10, syncState: .syncing)
        let lostByHost = Message(
            reqId: "host-2", channelURL: Harness.channel, senderId: "alice", text: "never made it", createdAt: 11, syncState: .created)
        try await collection.appendMessage(sentByHost)
        try await collection.appendMessage(lostByHost)
        #expect(await collection.pendingMessages.map(\.reqId) == ["host-1", "host-2"])
        await harness.manager.close()
        _ = try await harness.server.service(for: "alice").sendMessage(
            SendMessageRequest(reqId: "host-1", channelURL: Harness.channel, kind: .text, text: "via my SDK"))

        try await harness.relaunch()
        await harness.online()
        #expect(await harness.manager.message(reqId: "host-1")?.syncState == .synced)
        let left = try harness.outbox()
        #expect(left.map(\.reqId) == ["host-2"])
        #expect(left.first?.message.syncState == .failed)
        #expect(await harness.server.sendLog.map(\.reqId) == ["host-1"], "ChatSync never sends a host's message, even under .automatic")
    }

    @Test func theHostSentPathResolvesInSession() async throws {
        let harness = try await Harness.make()
        await harness.online()
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        let pending = Message(reqId: "h1", channelURL: Harness.channel, senderId: "alice", text: "hi", createdAt: 1, syncState: .syncing)
        try await collection.appendMessage(pending)
        #expect(await errorCode { try await collection.appendMessage(pending) } == .invalidParameter, "a reqId once")
        #expect(
            await errorCode {
                try await collection.appendMessage(
                    Message(channelURL: Harness.channel, senderId: "alice", createdAt: 1, syncState: .created))
            } == .invalidParameter)
        // The host sends it through its own SDK, then reports the response.
        let sent = try await harness.server.service(for: "alice").sendMessage(
            SendMessageRequest(reqId: "h1", channelURL: Harness.channel, kind: .text, text: "hi"))
        await collection.handleSendMessageResponse(sent, error: nil)
        await harness.settle()
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await collection.succeededMessages.map(\.reqId) == ["h1"])

        let failing = Message(reqId: "h2", channelURL: Harness.channel, senderId: "alice", text: "x", createdAt: 2, syncState: .syncing)
        try await collection.appendMessage(failing)
        await collection.handleSendMessageResponse(failing, error: ChatServiceError.permanent(.forbidden, "no"))
        #expect(await collection.failedMessages.map(\.reqId) == ["h2"])
        #expect(await collection.failedMessages.first?.failure?.code == 403)
        try await collection.deleteMessage(failing)
        #expect(await collection.failedMessages.isEmpty)

        // Host edits of a synced message.
        var edited = try #require(await collection.succeededMessages.first)
        edited.text = "hi!"
        edited.updatedAt += 1
        try await collection.updateMessage(edited)
        #expect(await collection.succeededMessages.first?.text == "hi!")
        #expect(await errorCode { try await collection.updateMessage(failing) } == .invalidParameter)
        await checkInvariants(collection, recorder)
    }
}
