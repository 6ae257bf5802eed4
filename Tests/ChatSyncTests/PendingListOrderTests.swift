import ChatSyncTesting
import Testing

@testable import ChatSync

/// The pending list is ascending by `createdAt` (API §3), whatever order its messages
/// came in, and holds only messages still pending (created, uploading or syncing).
@Suite("Pending list order and states", .capturingLogs)
struct PendingListOrderTests {
    /// A failed message resent behind a newer one goes back in the outbox after it (by
    /// row); it stays in the failed list while it is on its way again (API §4.3), and a
    /// collection opened then must still list the failed messages in creation order.
    @Test func aResentMessageIsListedByItsCreationNotItsTurn() async throws {
        let time = ManualTime()
        let harness = try await Harness.make {
            $0.messageResendPolicy = .manual; $0.currentTime = time.source
        }
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["refused once", "refused too"]))
        let older = try await harness.manager.sendMessage(.text("refused once"), channelURL: Harness.channel)
        time.advance(days: 1)
        let refused = try await harness.manager.sendMessage(.text("refused too"), channelURL: Harness.channel)
        await harness.settle()
        let early = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let earlyRecorder = EventRecorder()
        await early.setHandler(earlyRecorder)
        try await early.fetchFailedMessages()
        #expect(await early.failedMessages.map(\.reqId) == [older.reqId, refused.reqId])

        await harness.server.setFaults(FaultPlan())
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        time.advance(days: 1)
        let newer = try await harness.manager.sendMessage(.text("newer"), channelURL: Harness.channel)
        _ = try await harness.manager.resendMessage(reqId: older.reqId)
        #expect(older.createdAt < refused.createdAt && refused.createdAt < newer.createdAt)

        // A collection that listed it as failed keeps it there, and fetching its pending
        // list does not list it a second time.
        try await early.fetchPendingMessages()
        #expect(await early.pendingMessages.map(\.reqId) == [newer.reqId])
        #expect(await early.failedMessages.map(\.reqId) == [older.reqId, refused.reqId])
        await checkInvariants(early, earlyRecorder)

        // A collection opened meanwhile lists it where the first one does, in creation
        // order although the outbox now holds it after the other failed message.
        let late = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await late.setHandler(recorder)
        try await late.fetchPendingMessages()
        try await late.fetchFailedMessages()
        #expect(await late.pendingMessages.map(\.reqId) == [newer.reqId])
        #expect(await late.failedMessages.map(\.reqId) == [older.reqId, refused.reqId])
        await checkInvariants(late, recorder)

        // Sent at last, it leaves the failed lists for the succeeded ones.
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        for collection in [early, late] {
            #expect(await collection.failedMessages.map(\.reqId) == [refused.reqId])
            #expect(await collection.pendingMessages.isEmpty)
        }
        await checkInvariants(early, earlyRecorder)
        await checkInvariants(late, recorder)
    }

    /// An answer whose echo has not come is `.syncing` in the pending list of a collection
    /// opened meanwhile, as in one that listed it when it was sent: `.synced` is for the
    /// succeeded list, which it enters with its echo.
    @Test func anAnswerAwaitingItsEchoIsListedAsSyncing() async throws {
        let harness = try await Harness.make()
        await harness.online()
        let early = try await harness.manager.messageCollection(channelURL: Harness.channel)
        _ = try await early.fetchSucceededMessages(.previous)
        await harness.server.holdEvents(for: "alice")
        let sent = try await harness.manager.sendMessage(.text("echo later"), channelURL: Harness.channel)
        await harness.settle()
        let answer = try #require(await harness.manager.engine.outbox.awaitingEcho[sent.reqId])

        let late = try await harness.manager.messageCollection(channelURL: Harness.channel)
        try await late.fetchPendingMessages()
        let listed = try #require(await late.pendingMessages.first)
        #expect(listed.syncState == .syncing && listed.messageId == answer.messageId)
        #expect(listed.createdAt == sent.createdAt, "listed with the time it was sent, as in the early view")

        let returned = try await harness.manager.updateMessage(messageId: answer.messageId, channelURL: Harness.channel, text: "edited")
        #expect(returned.syncState == .syncing && returned.createdAt == sent.createdAt, "returned as the pending lists show it")
        for collection in [early, late] {
            let shown = try #require(await collection.pendingMessages.first)
            #expect(shown.syncState == .syncing && shown.text == "edited" && shown.isEditPending)
        }
        // An update replaces in place (API §3.3): the early view keeps the time it listed.
        #expect(await early.pendingMessages.first?.createdAt == sent.createdAt)
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        for collection in [early, late] { #expect(await collection.pendingMessages.isEmpty) }
        let placed = try #require(await early.succeededMessages.last)
        #expect(placed.reqId == sent.reqId && placed.syncState == .synced && placed.text == "edited")
    }

    /// With the device's clock behind the service's, an answer awaiting its echo carries
    /// a service time later than a message sent after it. A collection opened meanwhile
    /// must list the two in the order every other collection does: by the times they
    /// were sent with.
    @Test func anAnswerAwaitingItsEchoKeepsItsPlaceWhenTheClocksDisagree() async throws {
        let time = ManualTime()
        time.advance(days: -2_000)  // well before the simulator's clock (2023)
        let harness = try await Harness.make { $0.currentTime = time.source }
        let (early, earlyRecorder) = try await harness.collectionAtTheNewestMessages()  // answers wait for their echo
        await harness.server.holdEvents(for: "alice")
        let first = try await harness.manager.sendMessage(.text("answered"), channelURL: Harness.channel)
        await harness.settle()
        let answer = try #require(await harness.manager.engine.outbox.awaitingEcho[first.reqId])
        time.advance(days: 1)
        await harness.server.holdRequests()
        let second = try await harness.manager.sendMessage(.text("on its way"), channelURL: Harness.channel)
        #expect(await eventually { await harness.server.heldRequestCount > 0 }, "the second send is in flight")
        #expect(first.createdAt < second.createdAt && second.createdAt < answer.createdAt)

        let late = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await late.setHandler(recorder)
        try await late.fetchPendingMessages()
        #expect(await early.pendingMessages.map(\.reqId) == [first.reqId, second.reqId])
        #expect(await late.pendingMessages.map(\.reqId) == [first.reqId, second.reqId], "ordered as the early view orders them")
        #expect(await late.pendingMessages.map(\.createdAt) == [first.createdAt, second.createdAt])
        await checkInvariants(early, earlyRecorder)
        await checkInvariants(late, recorder)

        await harness.server.releaseRequests()
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        for collection in [early, late] { #expect(await collection.pendingMessages.isEmpty) }
        await checkInvariants(early, earlyRecorder)
        await checkInvariants(late, recorder)
    }

    /// An image and a text sent in one millisecond, the text answered first and waiting
    /// for its echo while the image uploads: a collection opened then lists the answer
    /// apart from the outbox, so the two would be ordered by when each collection heard
    /// of them. Each send is dated after the channel's last one instead, and every
    /// collection lists them in the order they were sent.
    @Test func messagesSentInOneMillisecondAreOrderedAlikeEverywhere() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let time = ManualTime()  // stands still: every send falls in one millisecond of the device's clock
        var harness = try await Harness.make(databasePath: dir.path("cache.sqlite")) { $0.currentTime = time.source }
        let (early, earlyRecorder) = try await harness.collectionAtTheNewestMessages()  // answers wait for their echo
        await harness.server.holdEvents(for: "alice")
        await harness.server.holdUploads()
        let image = try await harness.manager.sendMessage(
            .file(.image, localPath: try makeAttachment(in: dir), name: "p.png", mimeType: "image/png"), channelURL: Harness.channel)
        let text = try await harness.manager.sendMessage(.text("caption"), channelURL: Harness.channel)
        #expect(await eventually { await harness.manager.engine.outbox.awaitingEcho[text.reqId] != nil }, "the text was answered")
        #expect(await harness.server.heldUploadCount == 1, "the image is still uploading")
        #expect(image.createdAt == time.now && text.createdAt == time.now + 1, "dated after the channel's last send")

        let late = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await late.setHandler(recorder)
        try await late.fetchPendingMessages()
        for collection in [early, late] {
            #expect(await collection.pendingMessages.map(\.reqId) == [image.reqId, text.reqId], "in the order they were sent")
        }
        await checkInvariants(early, earlyRecorder)
        await checkInvariants(late, recorder)

        // After a relaunch, the next send still comes after what the outbox holds, even
        // when the host appended a message of its own, dated earlier, first.
        await harness.server.releaseUploads()
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        await harness.server.setOnline(false, for: "alice")
        let queued = try await harness.manager.sendMessage(.text("queued"), channelURL: Harness.channel)
        try await harness.relaunch()
        let reopened = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let hostMessage = Message(
            reqId: "host-1", channelURL: Harness.channel, senderId: "alice", kind: .text, text: "host", createdAt: time.now - 5,
            syncState: .syncing)
        try await reopened.appendMessage(hostMessage)
        let next = try await harness.manager.sendMessage(.text("next"), channelURL: Harness.channel)
        #expect(queued.createdAt == time.now + 2 && next.createdAt == time.now + 3)
    }

    /// A failed message answered on a resend stays in the failed list until its echo
    /// (API §4.3): a collection opened meanwhile lists it there too, not as pending.
    @Test func anAnswerToAResendAwaitingItsEchoIsListedAsFailedEverywhere() async throws {
        let (harness, early, earlyRecorder, refused, _) = try await Self.resendAnsweredWithItsEchoHeld()
        #expect(await early.failedMessages.map(\.reqId) == [refused.reqId], "kept failed until its echo")

        let (late, recorder) = try await Self.openedWithItsLists(harness)
        #expect(await late.pendingMessages.isEmpty, "not pending in one collection while failed in another")
        #expect(await late.failedMessages.map(\.reqId) == [refused.reqId])
        #expect(await late.failedMessages.first?.createdAt == refused.createdAt)
        await checkInvariants(late, recorder)

        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        for collection in [early, late] {
            #expect(await collection.failedMessages.isEmpty)
            #expect(await collection.succeededMessages.last?.reqId == refused.reqId)
        }
        await checkInvariants(early, earlyRecorder)
        await checkInvariants(late, recorder)
    }

    /// The user's edit and deletion of a resend's answer awaiting its echo show in the
    /// failed lists that hold it; a refused deletion brings it back there, also in a
    /// collection opened while the deletion was queued, which listed it nowhere.
    @Test func writesOfAResendsAnswerShowInTheFailedLists() async throws {
        let (harness, early, earlyRecorder, _, answer) = try await Self.resendAnsweredWithItsEchoHeld()

        let edited = try await harness.manager.updateMessage(messageId: answer.messageId, channelURL: Harness.channel, text: "edited")
        #expect(edited.syncState == .syncing)
        #expect(await early.failedMessages.map(\.text) == ["edited"], "the edit shows in the failed list at once")
        await harness.settle()
        #expect(await early.failedMessages.map(\.text) == ["edited"], "and stays once it lands")

        // The service will refuse the deletion for good; it waits at the server meanwhile.
        var locked = FaultPlan()
        locked.lockedMessageIds = [answer.messageId]
        await harness.server.setFaults(locked)
        await harness.server.holdRequests()
        try await harness.manager.deleteMessage(messageId: answer.messageId, channelURL: Harness.channel)
        #expect(await early.failedMessages.isEmpty, "a deleted message leaves the failed list at once")
        try #require(await eventually { await harness.server.heldRequestCount > 0 }, "the deletion is in flight")
        let (late, recorder) = try await Self.openedWithItsLists(harness)
        #expect(await late.pendingMessages.isEmpty, "being deleted, it is listed nowhere")
        #expect(await late.failedMessages.isEmpty, "being deleted, it is listed nowhere")

        await harness.server.releaseRequests()
        await harness.settle()
        for collection in [early, late] {
            #expect(await collection.pendingMessages.isEmpty, "back in the failed list, not the pending one")
            #expect(await collection.failedMessages.map(\.text) == ["edited"], "the refused deletion is undone")
        }
        await checkInvariants(early, earlyRecorder)
        await checkInvariants(late, recorder)
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        for collection in [early, late] { #expect(await collection.failedMessages.isEmpty) }
        #expect(await early.succeededMessages.last?.text == "edited")
    }

    /// A collection at the newest messages (so answers wait for their echo) lists a
    /// message refused once as failed; it is resent with alice's events held, and answered.
    /// Answers the harness, the collection and its recorder, the message as sent, and the
    /// answer awaiting its echo.
    private static func resendAnsweredWithItsEchoHeld() async throws -> (
        Harness, MessageCollection, EventRecorder, Message, Message
    ) {
        let harness = try await Harness.make { $0.messageResendPolicy = .manual }
        await harness.online()
        let early = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await early.setHandler(recorder)
        _ = try await early.fetchSucceededMessages(.previous)
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["refused once"]))
        let refused = try await harness.manager.sendMessage(.text("refused once"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await early.failedMessages.map(\.reqId) == [refused.reqId])
        await harness.server.setFaults(FaultPlan())
        await harness.server.holdEvents(for: "alice")
        _ = try await harness.manager.resendMessage(reqId: refused.reqId)
        await harness.settle()
        let answer = try #require(await harness.manager.engine.outbox.awaitingEcho[refused.reqId], "the resend was answered")
        return (harness, early, recorder, refused, answer)
    }

    /// A collection opened now, with its recorder, that fetched its pending and failed lists.
    private static func openedWithItsLists(_ harness: Harness) async throws -> (MessageCollection, EventRecorder) {
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        try await collection.fetchPendingMessages()
        try await collection.fetchFailedMessages()
        return (collection, recorder)
    }
}
