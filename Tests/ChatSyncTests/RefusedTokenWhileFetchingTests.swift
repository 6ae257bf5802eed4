import ChatSyncTesting
import Testing

@testable import ChatSync

/// A change-log token refused while a view at the newest messages fetches: the view
/// stands at the newest messages again, empty, and was not fresh while its fetch was out,
/// so the reconnect that drops the history proved nothing for it. Before, it stayed empty
/// in a quiet channel until the next message or reconnect (soak seed 325, found by the
/// clear-cache step's watch of views at `.max`; a reviewer had named it).
@Suite("A refused token while a view fetches", .capturingLogs)
struct RefusedTokenWhileFetchingTests {
    @Test func theViewShowsTheNewestMessagesOnceItsFetchEnds() async throws {
        let (harness, older) = try await Harness.makeWrapped(
            history: 30, configure: { $0.syncBatchSize = 5 }, wrapper: { OlderPageHeld(base: $0) })
        let (server, engine) = (harness.server, harness.manager.engine)
        await harness.online()
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 5)
        let events = EventRecorder()
        await view.setHandler(events)
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.settle()
        await older.holdNext()
        let fetch = Task { try await view.fetchSucceededMessages(.previous) }
        try #require(await eventually { await older.isHolding }, "the older page is out")

        // Away while every change-log token expires; back, the history goes.
        await server.expireMessageChangeLogTokens()
        let epoch = await engine.epoch
        await server.setOnline(false, for: "alice")
        try #require(await eventually { await engine.epoch > epoch })
        await server.setOnline(true, for: "alice")
        try #require(await eventually { await engine.historyResetCount > 0 }, "the refused token dropped the history")
        await older.release()
        _ = try? await fetch.value
        await harness.settle()

        let truth = await server.messages(in: Harness.channel)
        #expect(await view.succeededMessages.map(\.messageId) == truth.suffix(5).map(\.messageId), "the newest page again")
        await checkInvariants(view, events)
    }
}

/// Holds the next request for older messages until released, then answers it.
private actor OlderPageHeld: ForwardingChatService {
    let base: any ChatService
    private var holdsNext = false
    private var held: CheckedContinuation<Void, Never>?

    init(base: any ChatService) { self.base = base }

    func holdNext() { holdsNext = true }
    var isHolding: Bool { held != nil }
    func release() {
        held?.resume()
        held = nil
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if holdsNext, query.timestamp != .max, query.prevLimit > 0 {
            holdsNext = false
            await withCheckedContinuation { held = $0 }
        }
        return try await base.fetchMessages(query)
    }
}
