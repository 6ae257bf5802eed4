import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// Wraps alice's service: logs the writes in the order they reach it, and can refuse
/// edits or deletions, hold them, or lose their answers (the request is applied, the
/// answer never comes back).
actor OperationFaults: ForwardingChatService {
    nonisolated let base: any ChatService
    private(set) var log: [String] = []
    var editError: ChatServiceError?
    var deletionError: ChatServiceError?
    /// How many answers to edits and deletions to lose next (after applying them).
    var answersToLose = 0
    private var holding = false
    private var held: [CheckedContinuation<Void, Never>] = []

    init(_ base: any ChatService) { self.base = base }

    func refuseEdits(with error: ChatServiceError?) { editError = error }
    func refuseDeletions(with error: ChatServiceError?) { deletionError = error }

    /// Whether a refusal applies to a message (`nil`: to every one). Any other goes on to
    /// the service, as a real service answers a write to a message it no longer holds
    /// (`notFound`) whatever it would refuse otherwise.
    private var refusalApplies: (@Sendable (_ channelURL: String, _ messageId: Int64) async -> Bool)?
    func refuseOnly(where applies: @escaping @Sendable (_ channelURL: String, _ messageId: Int64) async -> Bool) {
        refusalApplies = applies
    }
    /// Runs once after the next lost answer's request was applied, before it is lost.
    private var beforeLosing: (@Sendable () async -> Void)?
    func loseAnswers(_ count: Int, before: (@Sendable () async -> Void)? = nil) {
        answersToLose = count
        beforeLosing = before
    }
    func hold() { holding = true }
    var heldCount: Int { held.count }
    func release() {
        holding = false
        for waiter in held { waiter.resume() }
        held.removeAll()
    }

    private func loseAnswerIfAsked() async throws {
        guard answersToLose > 0 else { return }
        answersToLose -= 1
        if let beforeLosing {
            self.beforeLosing = nil
            await beforeLosing()
        }
        throw ChatServiceError.transient(.timeout, "the answer was lost")
    }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        log.append("send \(request.text)")
        return try await base.sendMessage(request)
    }

    /// Uploads that ended with their task cancelled.
    private(set) var cancelledUploads = 0

    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        defer { if Task.isCancelled { cancelledUploads += 1 } }
        return try await base.uploadFile(request, progress: progress)
    }

    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        log.append("edit \(messageId) \(text)")
        if holding { await withCheckedContinuation { held.append($0) } }
        if let editError, await refusalApplies?(channelURL, messageId) ?? true { throw editError }
        let answer = try await base.updateMessage(channelURL: channelURL, messageId: messageId, text: text, operationId: operationId)
        try await loseAnswerIfAsked()
        return answer
    }

    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        log.append("delete \(messageId)")
        if holding { await withCheckedContinuation { held.append($0) } }
        if let deletionError, await refusalApplies?(channelURL, messageId) ?? true { throw deletionError }
        try await base.deleteMessage(channelURL: channelURL, messageId: messageId, operationId: operationId)
        try await loseAnswerIfAsked()
    }
}

extension MessageCollectionEvent {
    /// The action of a succeeded-list event; `nil` for the others.
    fileprivate var action: MessageEventAction? {
        if case .succeeded(let action, _) = self { action } else { nil }
    }
}

/// Edits, deletions and corrections through the outbox (Guarantees: Edits and deletions).
@Suite("Edits and deletions through the outbox", .capturingLogs)
struct OutboxOperationTests {
    /// Alice online with two messages of her own in the channel and a live collection.
    private func setUp(
        databasePath: String? = nil, configure: (inout SyncManagerOptions) -> Void = { _ in }
    ) async throws -> (Harness, OperationFaults, MessageCollection, EventRecorder, [Message]) {
        var faults: OperationFaults?
        let harness = try await Harness.make(
            history: 3, databasePath: databasePath, configure: configure,
            wrapping: { service in
                let wrapper = OperationFaults(service)
                faults = wrapper
                return wrapper
            })
        await harness.online()
        for text in ["first", "second"] { _ = try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel) }
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        let mine = await collection.succeededMessages.filter { $0.senderId == "alice" }
        #expect(mine.map(\.text) == ["first", "second"])
        return (harness, try #require(faults), collection, recorder, mine)
    }

    private func offline(_ harness: Harness) async {
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
    }

    private func online(_ harness: Harness) async {
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
    }

    private func shown(_ collection: MessageCollection, _ messageId: Int64) async -> Message? {
        await collection.succeededMessages.first { $0.messageId == messageId }
    }

    /// Alice's message `text`, sent with her real-time events held: answered, and waiting
    /// for its echo until the test releases them. Answers the draft and the answer.
    private func sentWithEchoHeld(
        _ harness: Harness, text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (draft: Message, answered: Message) {
        await harness.server.holdEvents(for: "alice")
        let draft = try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel)
        let engine = harness.manager.engine
        try #require(
            await eventually { await engine.outbox.awaitingEcho[draft.reqId] != nil }, "the answer waits for its echo",
            sourceLocation: sourceLocation)
        return (draft, try #require(await engine.outbox.awaitingEcho[draft.reqId], sourceLocation: sourceLocation))
    }

    private func onServer(_ harness: Harness, _ messageId: Int64) async -> Message? {
        await harness.server.messages(in: Harness.channel).first { $0.messageId == messageId }
    }

    @Test func anOfflineEditIsStoredAndShownAtOnceThenLandsOnline() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await offline(harness)
        let mark = recorder.events.count
        let local = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "first!")
        #expect(local.text == "first!" && local.isEditPending)
        #expect(await shown(collection, mine[0].messageId) == local)
        #expect(recorder.events.dropFirst(mark).compactMap(\.action) == [.update])
        #expect(try harness.manager.engine.store.operations().count == 1, "stored before the call returned")
        #expect(await onServer(harness, mine[0].messageId)?.text == "first", "offline: nothing sent")

        await online(harness)
        let landed = try #require(await shown(collection, mine[0].messageId))
        #expect(landed.text == "first!" && !landed.isEditPending)
        #expect(await onServer(harness, mine[0].messageId)?.text == "first!")
        #expect(await faults.log.filter { $0.hasPrefix("edit") }.count == 1)
        #expect(try harness.manager.engine.store.operations().isEmpty)
        #expect(recorder.failedOperations.isEmpty)
        await checkInvariants(collection, recorder)
    }

    @Test func anOfflineDeletionRemovesAtOnceSupersedesEditsAndLandsOnline() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await offline(harness)
        let target = mine[1].messageId
        _ = try await harness.manager.updateMessage(messageId: target, channelURL: Harness.channel, text: "never sent")
        try await harness.manager.deleteMessage(messageId: target, channelURL: Harness.channel)
        #expect(await shown(collection, target) == nil, "removed at once")
        #expect(try harness.manager.engine.store.operations().map(\.operation.kind) == [.deletion], "the edit was superseded")
        #expect(
            await errorCode { _ = try await harness.manager.updateMessage(messageId: target, channelURL: Harness.channel, text: "x") }
                == .invalidParameter)
        try await harness.manager.deleteMessage(messageId: target, channelURL: Harness.channel)  // twice: nothing more

        await online(harness)
        #expect(await onServer(harness, target) == nil)
        #expect(await faults.log.filter { $0.hasPrefix("edit") || $0.hasPrefix("delete") } == ["delete \(target)"])
        #expect(await shown(collection, target) == nil)
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: target) == nil)
        #expect(recorder.failedOperations.isEmpty)
        await checkInvariants(collection, recorder)
    }

    @Test func editsAndDeletionsGoInOrderWithTheTextLane() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await offline(harness)
        let before = await faults.log.count
        _ = try await harness.manager.sendMessage(.text("t1"), channelURL: Harness.channel)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "e1")
        _ = try await harness.manager.sendMessage(.text("t2"), channelURL: Harness.channel)
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "e2")
        _ = try await harness.manager.sendMessage(.text("t3"), channelURL: Harness.channel)
        #expect(await shown(collection, mine[0].messageId)?.text == "e2", "the last queued edit is shown")

        await online(harness)
        let log = Array(await faults.log.dropFirst(before))
        #expect(
            log == [
                "send t1", "edit \(mine[0].messageId) e1", "send t2", "delete \(mine[1].messageId)",
                "edit \(mine[0].messageId) e2", "send t3",
            ])
        #expect(await onServer(harness, mine[0].messageId)?.text == "e2")
        let server = await harness.serverMessages()
        #expect(await collection.succeededMessages.map(\.messageId) == server.map(\.messageId))
        #expect(await collection.succeededMessages.map(\.text) == server.map(\.text))
        await checkInvariants(collection, recorder)
    }

    @Test func aPermanentRefusalUndoesTheEditAndIsReportedOnce() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await faults.refuseEdits(with: .permanent(.forbidden, "edits are closed"))
        let mark = recorder.events.count
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "nope")
        await harness.settle()
        let back = try #require(await shown(collection, mine[0].messageId))
        #expect(back.text == "first" && !back.isEditPending, "the service's version came back")
        #expect(recorder.failedOperations.map(\.kind) == [.edit])
        #expect(recorder.failedOperations.first?.text == "nope")
        #expect(recorder.events.dropFirst(mark).compactMap(\.action) == [.update, .update], "shown, then undone")
        if case .operationFailed = recorder.events.last {
        } else {
            Issue.record("the failure is reported after the undo: \(recorder.events.suffix(2))")
        }
        #expect(try harness.manager.engine.store.operations().isEmpty)
        await checkInvariants(collection, recorder)
    }

    /// The user left the channel while an edit waited offline. Refused after the news took
    /// the channel's history from the cache, the edit has no confirmed version to bring
    /// back: the collection (told of the end) stops showing the message rather than keep
    /// the refused text as pending for good (an adversarial tester's case). Refused before
    /// the news, it is undone to the confirmed version as anywhere (which the news may then
    /// take). Either way the refused text is never left shown. The edit is held at the
    /// service until the chosen order is reached: the lanes and the reconnect's sync race.
    @Test(arguments: [true, false])
    func anEditRefusedAfterLeavingTheChannelIsNotShownAsPending(refusedAfterTheNews: Bool) async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await offline(harness)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "gone")
        try await harness.server.removeMember("alice", from: Harness.channel)
        await faults.refuseEdits(with: .permanent(.forbidden, "not a member"))
        await faults.hold()
        await harness.server.setOnline(true, for: "alice")
        #expect(await eventually { await faults.heldCount == 1 }, "the edit reaches the service")
        if refusedAfterTheNews {
            #expect(await eventually { recorder.events.contains(.channelRemoved(Harness.channel)) }, "the news comes first")
            await faults.release()
        } else {
            await faults.release()
            #expect(await eventually { !recorder.failedOperations.isEmpty }, "the refusal comes first")
        }
        await harness.settle()
        #expect(recorder.events.contains(.channelRemoved(Harness.channel)))
        #expect(recorder.failedOperations.map(\.text) == ["gone"], "the edit is reported as failed")
        let shown = await shown(collection, mine[0].messageId)
        if refusedAfterTheNews {
            #expect(shown == nil, "the refused text is not shown: \(String(describing: shown))")
        } else {
            // Undone to the confirmed version, which the news then may take with the channel.
            #expect(shown == nil || shown?.text == "first", "undone to the confirmed version: \(String(describing: shown))")
        }
        #expect(await collection.succeededMessages.filter(\.isEditPending).isEmpty)
        #expect(try harness.manager.engine.store.operations().isEmpty)
        await checkInvariants(collection, recorder)
    }

    @Test func spentRetriesUndoTheDeletion() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp { $0.sendRetryLimit = 2 }
        await faults.refuseDeletions(with: .transient(.server, "busy"))
        let before = await faults.log.count
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        await harness.settle()
        #expect(await faults.log.dropFirst(before).count == 3, "the first try and two retries")
        #expect(await shown(collection, mine[1].messageId)?.text == "second", "the message came back")
        #expect(recorder.failedOperations.map(\.kind) == [.deletion])
        if case .operationFailed = recorder.events.last {
        } else {
            Issue.record("the failure is reported after the message came back: \(recorder.events.suffix(2))")
        }
        #expect(
            recorder.succeededEvents.suffix(2).map(\.0) == [.remove, .insert], "removed at once, inserted again when undone")
        await checkInvariants(collection, recorder)
    }

    @Test func realTimeUpdatesDoNotOverwriteAPendingEdit() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await faults.hold()
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "mine")
        #expect(await eventually { await faults.heldCount == 1 })
        _ = try await harness.server.update(messageId: mine[0].messageId, channelURL: Harness.channel, text: "moderated")
        let store = harness.manager.engine.store
        // The lane is busy with the held edit, so wait for the update itself, not for idle.
        #expect(await eventually { (try? store.message(channelURL: Harness.channel, messageId: mine[0].messageId))??.text == "moderated" })
        #expect(await shown(collection, mine[0].messageId)?.text == "mine", "the local text stays while the edit waits")
        await faults.release()
        await harness.settle()
        #expect(await shown(collection, mine[0].messageId)?.text == "mine")
        #expect(await shown(collection, mine[0].messageId)?.isEditPending == false)
        #expect(await onServer(harness, mine[0].messageId)?.text == "mine")
        await checkInvariants(collection, recorder)
    }

    @Test func aDeletionOnTheServiceFailsTheEditsQueuedForTheMessage() async throws {
        let (harness, _, collection, recorder, mine) = try await setUp()
        await offline(harness)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "late")
        try await harness.server.delete(messageId: mine[0].messageId, channelURL: Harness.channel)
        await online(harness)
        #expect(await shown(collection, mine[0].messageId) == nil)
        #expect(recorder.failedOperations.map(\.kind) == [.edit], "reported once")
        #expect(try harness.manager.engine.store.operations().isEmpty)
        #expect(await collection.succeededMessages.map(\.messageId) == (await harness.serverMessages()).map(\.messageId))
        await checkInvariants(collection, recorder)
    }

    @Test func lostAnswersMakeARepeatThatChangesNothing() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        await faults.loseAnswers(2)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "again")
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        await harness.settle()
        let log = await faults.log.filter { $0.hasPrefix("edit") || $0.hasPrefix("delete") }
        #expect(log.count == 4, "each was sent twice: \(log)")
        #expect(await onServer(harness, mine[0].messageId)?.text == "again")
        #expect(await onServer(harness, mine[1].messageId) == nil)
        #expect(recorder.failedOperations.isEmpty, "deleting a message already gone is done")
        #expect(await collection.succeededMessages.map(\.text) == (await harness.serverMessages()).map(\.text))
        await checkInvariants(collection, recorder)
    }

    /// An edit whose answer was lost is sent again under the same operation id, so the
    /// service applies it once: a moderator's edit made between the two tries stays.
    @Test func aRepeatAfterALostAnswerIsAppliedOnce() async throws {
        let (harness, faults, collection, recorder, mine) = try await setUp()
        let server = harness.server
        let target = mine[0].messageId
        await faults.loseAnswers(1) {
            _ = try? await server.update(messageId: target, channelURL: Harness.channel, text: "moderated")
        }
        _ = try await harness.manager.updateMessage(messageId: target, channelURL: Harness.channel, text: "alice's")
        await harness.settle()
        let requests = await server.operationRequests
        #expect(requests.count == 1 && requests.values.first == 2, "one operation, sent twice: \(requests)")
        #expect(await server.appliedOperations.count == 1)
        #expect(await onServer(harness, target)?.text == "moderated", "the repeat did not apply alice's edit again")
        #expect(await shown(collection, target)?.text == "moderated")
        #expect(await shown(collection, target)?.isEditPending == false)
        await checkInvariants(collection, recorder)
    }

    @Test func queuedOperationsSurviveARelaunchAndGoInOrder() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        var (harness, faults, collection, _, mine) = try await setUp(databasePath: dir.path("cache.sqlite"))
        await offline(harness)
        _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "kept")
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        await collection.remove()
        try await harness.relaunch()
        let reopened = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await reopened.setHandler(recorder)
        _ = try await reopened.fetchSucceededMessages(.previous)
        #expect(await shown(reopened, mine[0].messageId)?.text == "kept", "the queued edit is shown after the relaunch")
        #expect(await shown(reopened, mine[0].messageId)?.isEditPending == true)
        #expect(await shown(reopened, mine[1].messageId) == nil, "the queued deletion too")
        let before = await faults.log.count
        await harness.online()
        await online(harness)
        #expect(
            Array(await faults.log.dropFirst(before)) == ["edit \(mine[0].messageId) kept", "delete \(mine[1].messageId)"])
        #expect(await onServer(harness, mine[0].messageId)?.text == "kept")
        #expect(await onServer(harness, mine[1].messageId) == nil)
        #expect(await collection.succeededMessages.isEmpty, "the old collection was removed")
        await checkInvariants(reopened, recorder)
    }

    @Test func aMessageNotSentYetIsCorrectedInTheOutbox() async throws {
        let (harness, faults, collection, recorder, _) = try await setUp()
        try await collection.fetchPendingMessages()
        await offline(harness)
        let waiting = try await harness.manager.sendMessage(.text("tpyo"), channelURL: Harness.channel)
        let corrected = try await harness.manager.updatePendingMessage(reqId: waiting.reqId, text: "typo")
        #expect(corrected.text == "typo" && corrected.syncState == .created)
        #expect(await collection.pendingMessages.map(\.text) == ["typo"])
        #expect(recorder.events.contains { if case .pending(.update, let m) = $0 { m.first?.text == "typo" } else { false } })
        for bad in ["", "   ", String(repeating: "x", count: SendLimits.maxTextLength + 1)] {
            #expect(
                await errorCode { _ = try await harness.manager.updatePendingMessage(reqId: waiting.reqId, text: bad) } == .invalidParameter
            )
        }
        #expect(await errorCode { _ = try await harness.manager.updatePendingMessage(reqId: "unknown", text: "x") } == .invalidParameter)
        let before = await faults.log.count
        await online(harness)
        #expect(Array(await faults.log.dropFirst(before)) == ["send typo"], "one request, with the corrected text")
        #expect(await harness.serverMessages().last?.text == "typo")
        #expect(
            await errorCode { _ = try await harness.manager.updatePendingMessage(reqId: waiting.reqId, text: "late") } == .invalidParameter,
            "a synced message is edited with updateMessage")
        await checkInvariants(collection, recorder)
    }

    @Test func aFailedMessageIsCorrectedAndResentWithTheNewText() async throws {
        let (harness, _, collection, recorder, _) = try await setUp { $0.messageResendPolicy = .manual }
        try await collection.fetchFailedMessages()
        try await harness.server.setFrozen(true, channelURL: Harness.channel)
        let refused = try await harness.manager.sendMessage(.text("loud"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await collection.failedMessages.map(\.reqId) == [refused.reqId])
        _ = try await harness.manager.updatePendingMessage(reqId: refused.reqId, text: "quiet")
        #expect(await collection.failedMessages.map(\.text) == ["quiet"])
        #expect(recorder.events.contains { if case .failed(.update, let m, .none) = $0 { m.first?.text == "quiet" } else { false } })
        try await harness.server.setFrozen(false, channelURL: Harness.channel)
        _ = try await harness.manager.resendMessage(reqId: refused.reqId)
        await harness.settle()
        #expect(await harness.serverMessages().last?.text == "quiet")
        await checkInvariants(collection, recorder)
    }

    /// Soak seed 194: a failed message whose lost answer hid that the service stored it was
    /// corrected, then resent: the answer names the stored copy, with the old text.
    @Test(arguments: [false, true])
    func aCorrectionOfAMessageTheServiceAlreadyStoredFollowsAsAnEdit(resendFirst: Bool) async throws {
        let (harness, _, collection, recorder, _) = try await setUp {
            $0.messageResendPolicy = .manual
            $0.sendRetryLimit = 0
        }
        try await collection.fetchFailedMessages()
        await harness.server.setFaults(FaultPlan(loseResponseRate: 1))
        await harness.server.holdEvents(for: "alice")  // its echo too is late
        let draft = try await harness.manager.sendMessage(.text("helo"), channelURL: Harness.channel)
        #expect(await eventually { await collection.failedMessages.map(\.reqId) == [draft.reqId] })
        #expect(await harness.serverMessages().last?.text == "helo", "stored, its answer lost")
        await harness.server.setFaults(FaultPlan())
        _ = try await harness.manager.updatePendingMessage(reqId: draft.reqId, text: "hello")
        if resendFirst { _ = try await harness.manager.resendMessage(reqId: draft.reqId) }
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        let stored = try #require(await harness.serverMessages().last)
        #expect(stored.reqId == draft.reqId && stored.text == "hello", "the user's correction holds on the service")
        #expect(await collection.succeededMessages.last?.text == "hello")
        #expect(await collection.succeededMessages.last?.isEditPending == false)
        #expect(await harness.serverMessages().filter { $0.reqId == draft.reqId }.count == 1)
        await checkInvariants(collection, recorder)
    }

    /// A message answered but not yet echoed is only in the pending list: an edit shows
    /// there at once, a deletion takes it out at once, and the late echo obeys both.
    @Test(arguments: [false, true])
    func aMessageAwaitingItsEchoIsEditedOrDeletedAtOnce(deleting: Bool) async throws {
        let (harness, _, collection, recorder, _) = try await setUp()
        try await collection.fetchPendingMessages()
        let (draft, answered) = try await sentWithEchoHeld(harness, text: "echo me")
        #expect(await collection.pendingMessages.map(\.reqId) == [draft.reqId])
        if deleting {
            try await harness.manager.deleteMessage(messageId: answered.messageId, channelURL: Harness.channel)
            #expect(await collection.pendingMessages.isEmpty, "deleted at once")
        } else {
            _ = try await harness.manager.updateMessage(messageId: answered.messageId, channelURL: Harness.channel, text: "echoed")
            #expect(await collection.pendingMessages.map(\.text) == ["echoed"], "edited at once")
        }
        #expect(await harness.manager.message(reqId: draft.reqId)?.text == (deleting ? nil : "echoed"))
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        let shown = await collection.succeededMessages.first { $0.messageId == answered.messageId }
        #expect(shown?.text == (deleting ? nil : "echoed"))
        #expect(await onServer(harness, answered.messageId)?.text == (deleting ? nil : "echoed"))
        #expect(await collection.pendingMessages.isEmpty)
        await checkInvariants(collection, recorder)
    }

    /// Refused for good, an edit or deletion of a message still waiting for its echo is
    /// undone where that message lives, its pending list: before, the undo looked only in
    /// the cache, which does not hold it yet, so the refused text stayed shown as pending
    /// (or the message stayed hidden) until the echo came, and for good if it never did.
    @Test(arguments: [false, true])
    func aRefusedWriteOfAMessageAwaitingItsEchoIsUndoneInThePendingList(deleting: Bool) async throws {
        let (harness, faults, collection, recorder, _) = try await setUp()
        try await collection.fetchPendingMessages()
        let (draft, answered) = try await sentWithEchoHeld(harness, text: "echo me")
        await faults.refuseEdits(with: .permanent(.forbidden, "edits are closed"))
        await faults.refuseDeletions(with: .permanent(.forbidden, "deletions are closed"))
        if deleting {
            try await harness.manager.deleteMessage(messageId: answered.messageId, channelURL: Harness.channel)
        } else {
            _ = try await harness.manager.updateMessage(messageId: answered.messageId, channelURL: Harness.channel, text: "never")
        }
        #expect(await eventually { (try? harness.manager.engine.store.operations().isEmpty) == true })
        let pending = await collection.pendingMessages
        #expect(pending.map(\.text) == ["echo me"], "undone at once: \(pending.map(\.text))")
        #expect(pending.first?.isEditPending == false)
        #expect(recorder.failedOperations.count == 1)
        #expect(await harness.manager.message(reqId: draft.reqId)?.text == "echo me")
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        #expect(await collection.succeededMessages.last?.text == "echo me")
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await onServer(harness, answered.messageId)?.text == "echo me")
        await checkInvariants(collection, recorder)
    }

    /// An edit of a message waiting for its echo lands: the pending list shows it as
    /// confirmed (no longer pending), and a later refused edit undoes to it, not to the
    /// text the message was sent with. A second reader found both.
    @Test func aLandedEditOfAMessageAwaitingItsEchoIsWhatARefusedOneUndoesTo() async throws {
        let (harness, _, collection, recorder, _) = try await setUp()
        try await collection.fetchPendingMessages()
        let (_, answered) = try await sentWithEchoHeld(harness, text: "first")
        let engine = harness.manager.engine
        _ = try await harness.manager.updateMessage(messageId: answered.messageId, channelURL: Harness.channel, text: "second")
        #expect(await eventually { (try? engine.store.operations().isEmpty) == true })
        #expect(await onServer(harness, answered.messageId)?.text == "second")
        var pending = await collection.pendingMessages
        #expect(pending.map(\.text) == ["second"] && pending.first?.isEditPending == false, "landed: \(pending)")
        var plan = await harness.server.faults
        plan.lockedMessageIds = [answered.messageId]
        await harness.server.setFaults(plan)
        _ = try await harness.manager.updateMessage(messageId: answered.messageId, channelURL: Harness.channel, text: "third")
        #expect(await eventually { (try? engine.store.operations().isEmpty) == true })
        pending = await collection.pendingMessages
        #expect(pending.map(\.text) == ["second"] && pending.first?.isEditPending == false, "undone to the landed edit: \(pending)")
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        #expect(await collection.succeededMessages.last?.text == "second")
        #expect(await collection.pendingMessages.isEmpty)
        await checkInvariants(collection, recorder)
    }

    /// A collection opened while a message waits for its echo lists it as pending: the
    /// message left the outbox when answered and is not cached yet, so before it showed
    /// nowhere in such a collection until the echo came.
    @Test func aCollectionOpenedWhileAnEchoIsAwaitedListsTheMessage() async throws {
        let (harness, _, _, _, _) = try await setUp()
        let (draft, _) = try await sentWithEchoHeld(harness, text: "on its way")
        let late = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await late.setHandler(recorder)
        try await late.fetchPendingMessages()
        #expect(await late.pendingMessages.map(\.reqId) == [draft.reqId])
        await harness.server.releaseEvents(for: "alice")
        _ = try await late.fetchSucceededMessages(.previous)
        await harness.settle()
        #expect(await late.pendingMessages.isEmpty)
        #expect(await late.succeededMessages.last?.reqId == draft.reqId)
        await checkInvariants(late, recorder)
    }

    @Test func cancellingAnUploadCancelsItAndSendsNothing() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let (harness, faults, collection, recorder, _) = try await setUp()
        try await collection.fetchPendingMessages()
        await harness.server.holdUploads()
        let sendsBefore = await faults.log.filter { $0.hasPrefix("send") }.count
        let photo = try await harness.manager.sendMessage(
            .file(.image, localPath: try makeAttachment(in: dir), name: "p.png", mimeType: "image/png"), channelURL: Harness.channel)
        #expect(await eventually { await harness.manager.message(reqId: photo.reqId)?.syncState == .uploading })
        try await harness.manager.cancelMessage(reqId: photo.reqId)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(recorder.events.contains { if case .pending(.remove, let m) = $0 { m.first?.reqId == photo.reqId } else { false } })
        await harness.server.releaseUploads()
        await harness.settle()
        #expect(await faults.cancelledUploads == 1, "the upload's task was cancelled")
        #expect(await faults.log.filter { $0.hasPrefix("send") }.count == sendsBefore, "no send request went")
        #expect(await harness.serverMessages().allSatisfy { $0.kind == .text }, "nothing was sent")
        #expect(try harness.outbox().isEmpty)
        #expect(await harness.manager.message(reqId: photo.reqId) == nil)
        await checkInvariants(collection, recorder)
    }

    @Test func badCallsAreRefusedAndChangeNothing() async throws {
        let (harness, _, collection, recorder, mine) = try await setUp()
        let bobs = try #require(await collection.succeededMessages.first { $0.senderId == "bob" })
        let refusals: [() async throws -> Void] = [
            { _ = try await harness.manager.updateMessage(messageId: bobs.messageId, channelURL: Harness.channel, text: "x") },
            { try await harness.manager.deleteMessage(messageId: bobs.messageId, channelURL: Harness.channel) },
            { _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "") },
            { _ = try await harness.manager.updateMessage(messageId: 999_999, channelURL: Harness.channel, text: "x") },
            { try await harness.manager.deleteMessage(messageId: 0, channelURL: Harness.channel) },
            { _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: "", text: "x") },
        ]
        for refusal in refusals { #expect(await errorCode(refusal) == .invalidParameter) }
        #expect(try harness.manager.engine.store.operations().isEmpty)
        await harness.manager.close()
        #expect(
            await errorCode {
                _ = try await harness.manager.updateMessage(messageId: mine[0].messageId, channelURL: Harness.channel, text: "x")
            }
                == .closed)
        #expect(
            await errorCode { try await harness.manager.deleteMessage(messageId: mine[0].messageId, channelURL: Harness.channel) }
                == .closed)
        #expect(await errorCode { _ = try await harness.manager.updatePendingMessage(reqId: "r", text: "x") } == .closed)
        _ = recorder
    }
}
