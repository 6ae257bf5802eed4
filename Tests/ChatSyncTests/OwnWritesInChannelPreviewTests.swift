import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// A channel's last message, as channel lists show it, follows the user's own queued
/// edits and deletions of it (API §4.6: shown at once, offline too), until they land or
/// are undone. Found by the channel-list replay generator (69 of 120 seeds before).
@Suite("Own writes in the channel preview", .capturingLogs)
struct OwnWritesInChannelPreviewTests {
    /// Alice online with a list of her channels and two messages of her own, the last one
    /// "second", in a channel whose history the cache holds.
    private func setUp(databasePath: String? = nil) async throws -> (Harness, OperationFaults, ChannelCollection, [Message]) {
        let (harness, faults) = try await Harness.makeWrapped(history: 3, databasePath: databasePath) { OperationFaults($0) }
        await harness.online()
        for text in ["first", "second"] { _ = try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel) }
        let messages = try await harness.manager.messageCollection(channelURL: Harness.channel)
        _ = try await messages.fetchSucceededMessages(.previous)
        await harness.settle()
        let mine = await messages.succeededMessages.filter { $0.senderId == "alice" }
        await messages.remove()
        let list = try await harness.manager.channelCollection()
        _ = try await list.fetch()
        await harness.settle()
        #expect(await preview(list)?.text == "second")
        return (harness, faults, list, mine)
    }

    /// Alice edits `message` to "refused", or deletes it; the service will refuse that for
    /// good, and holds it until the test releases it.
    private func queueWriteToBeRefused(
        _ kind: OutboxOperation.Kind, of message: Message, _ harness: Harness, _ faults: OperationFaults
    )
        async throws
    {
        let refusal = ChatServiceError.permanent(.forbidden, "not allowed")
        if kind == .edit { await faults.refuseEdits(with: refusal) } else { await faults.refuseDeletions(with: refusal) }
        await faults.hold()
        if kind == .edit {
            _ = try await harness.manager.updateMessage(messageId: message.messageId, channelURL: Harness.channel, text: "refused")
        } else {
            try await harness.manager.deleteMessage(messageId: message.messageId, channelURL: Harness.channel)
        }
        #expect(await eventually { await faults.heldCount == 1 })
    }

    private func preview(_ list: ChannelCollection) async -> Message? {
        await list.channels.first { $0.channelURL == Harness.channel }?.lastMessage
    }

    @Test func aQueuedEditShowsInTheListAtOnceAcrossARelaunchAndLands() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        var (harness, _, list, mine) = try await setUp(databasePath: directory.path("cache.sqlite"))
        await harness.manager.pauseSync()
        _ = try await harness.manager.updateMessage(messageId: mine[1].messageId, channelURL: Harness.channel, text: "second, edited")
        let shown = await preview(list)
        #expect(shown?.text == "second, edited" && shown?.isEditPending == true, "at once: \(String(describing: shown))")
        try await harness.relaunch()
        await harness.manager.pauseSync()
        list = try await harness.manager.channelCollection()
        _ = try await list.fetch()
        #expect(await preview(list)?.text == "second, edited", "after a relaunch, offline")
        await harness.online()
        let landed = await preview(list)
        #expect(landed?.text == "second, edited" && landed?.isEditPending == false, "landed: \(String(describing: landed))")
        #expect(await harness.server.channel(Harness.channel)?.lastMessage?.text == "second, edited")
        await harness.manager.close()
    }

    @Test func aQueuedDeletionShowsTheMessageBeforeItThenLands() async throws {
        let (harness, _, list, mine) = try await setUp()
        await harness.manager.pauseSync()
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        #expect(await preview(list)?.text == "first", "the message before it stands in at once")
        await harness.online()
        #expect(await preview(list)?.messageId == mine[0].messageId)
        #expect(await harness.server.channel(Harness.channel)?.lastMessage?.messageId == mine[0].messageId)
        await harness.manager.close()
    }

    @Test(arguments: [OutboxOperation.Kind.edit, .deletion])
    func aWriteRefusedForGoodIsUndoneInTheList(_ kind: OutboxOperation.Kind) async throws {
        let (harness, faults, list, mine) = try await setUp()
        try await queueWriteToBeRefused(kind, of: mine[1], harness, faults)
        #expect(await preview(list)?.text == (kind == .edit ? "refused" : "first"), "shown while it waits")
        await faults.release()
        await harness.settle()
        let undone = await preview(list)
        #expect(undone?.messageId == mine[1].messageId && undone?.text == "second" && undone?.isEditPending == false)
        await harness.manager.close()
    }

    /// Alice's edit lands while her message still waits for its echo; the echo, made
    /// before the edit, comes after it: the preview keeps the edit (an older copy of the
    /// preview's own message does not replace it).
    @Test func anEchoOlderThanALandedEditLeavesTheEditInTheList() async throws {
        let (harness, _, list, _) = try await setUp()
        await harness.server.holdEvents(for: "alice")
        let sent = try await harness.manager.sendMessage(.text("third"), channelURL: Harness.channel)
        await harness.settle()
        let answered = try #require(await harness.manager.engine.outbox.awaitingEcho[sent.reqId], "answered, its echo held")
        _ = try await harness.manager.updateMessage(messageId: answered.messageId, channelURL: Harness.channel, text: "third, edited")
        await harness.settle()
        #expect(await preview(list)?.text == "third, edited", "the landed edit shows")
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        let shown = await preview(list)
        #expect(shown?.messageId == answered.messageId && shown?.text == "third, edited", "\(String(describing: shown))")
        await harness.manager.close()
    }

    /// A write refused after a clear has no cached message to undo to, while the first page
    /// after the clear showed the write in the channel's preview: the service is asked for
    /// it (a review found the refused text, or no preview, left there).
    @Test(arguments: [OutboxOperation.Kind.edit, .deletion])
    func aWriteRefusedAfterAClearLeavesTheServicesLastMessage(_ kind: OutboxOperation.Kind) async throws {
        let (harness, faults, list, mine) = try await setUp()
        try await queueWriteToBeRefused(kind, of: mine[1], harness, faults)
        try await harness.manager.clearCache()
        #expect(await eventually { await list.channels.contains { $0.channelURL == Harness.channel } }, "the first page again")
        let shown = await preview(list)
        #expect(
            kind == .edit ? shown?.text == "refused" : shown?.messageId != mine[1].messageId,
            "the write shows: \(String(describing: shown))")
        await faults.release()
        await harness.settle()
        let undone = await preview(list)
        #expect(
            undone?.messageId == mine[1].messageId && undone?.text == "second" && undone?.isEditPending == false,
            "the service's last message: \(String(describing: undone))")
        await harness.manager.close()
    }

    /// The page after a clear is answered while the deletion is still on its way: it names
    /// the message, so nothing cached stands in. Once the deletion lands, the list asks the
    /// service again rather than show no last message for good.
    @Test func aDeletionLandingAfterAPageThatStillNamedItShowsTheServicesLastMessage() async throws {
        let (harness, faults, list, mine) = try await setUp()
        await faults.hold()
        try await harness.manager.deleteMessage(messageId: mine[1].messageId, channelURL: Harness.channel)
        #expect(await eventually { await faults.heldCount == 1 })
        try await harness.manager.clearCache()
        #expect(await eventually { await list.channels.contains { $0.channelURL == Harness.channel } }, "the first page again")
        #expect(await preview(list)?.messageId != mine[1].messageId, "the deleted message is not shown")
        await faults.release()
        await harness.settle()
        let last = await preview(list)
        #expect(last?.messageId == mine[0].messageId, "the service's last message: \(String(describing: last))")
        await harness.manager.close()
    }

    /// Bob's message and its deletion reach alice only after a clear, whose first page
    /// already knew the deletion: the stale message stands as the preview, then its
    /// deletion leaves nothing cached to stand in, and no change log after the new token
    /// names it. The channel's newest message, asked of the service, does. (The channel
    /// list generator found it, seed 217 about one run in six.)
    @Test func aStaleMessageDeletedAfterAClearLeavesTheServicesLastMessage() async throws {
        let (harness, _, list, mine) = try await setUp()
        await harness.server.holdEvents(for: "alice")
        let stale = try await harness.server.post(.text("x"), from: "bob", to: Harness.channel)
        try await harness.server.delete(messageId: stale.messageId, channelURL: Harness.channel)
        try await harness.manager.clearCache()
        #expect(await eventually { await preview(list)?.messageId == mine[1].messageId }, "the first page again, as the service has it")
        await harness.server.releaseEvents(for: "alice")
        await harness.settle()
        let last = await preview(list)
        #expect(last?.messageId == mine[1].messageId, "the service's last message: \(String(describing: last))")
        await harness.manager.close()
    }
}
