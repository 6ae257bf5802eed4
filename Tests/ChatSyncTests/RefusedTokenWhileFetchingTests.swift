import ChatSyncTesting
import Clocks
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
        let (view, events) = try await harness.collectionAtTheNewestMessages(limit: 5)
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

/// The same refusal met by an app's fetch of a view in history, after the reconnect sync
/// passed the channel with its change logs unanswered (its retry waits on the clock): the
/// fetch ends not fresh, so it proves nothing, and a view at the newest messages that was
/// not fetching stands there empty. Before, it stayed empty until the retry, or, once
/// the chain ran out, the next message or reconnect (a reviewer's medium finding).
@Suite("A refused token met by a fetch in history", .capturingLogs)
struct RefusedTokenMetInHistoryTests {
    @Test func aViewAtTheNewestMessagesShowsThemWithoutWaitingForTheRetry() async throws {
        let clock = TestClock()
        let (harness, logs) = try await Harness.makeWrapped(history: 30, configure: { $0.clock = clock }) {
            SteeredChangeLogs(base: $0)
        }
        let server = harness.server
        let (live, liveEvents) = try await harness.collectionAtTheNewestMessages(limit: 5)
        let history = try await harness.manager.messageCollection(
            channelURL: Harness.channel, viewpoint: (await server.messages(in: Harness.channel))[10].createdAt, limit: 5)
        _ = try await history.fetchSucceededMessages(.next)
        await harness.settle()

        // Away while the tokens expire; back, the reconnect's change-log request fails.
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await server.expireMessageChangeLogTokens()
        await logs.failNext()
        await server.setOnline(true, for: "alice")
        try #require(await eventually { await logs.failed == 1 }, "the reconnect sync's change logs were not answered")
        try #require(await eventually { await harness.manager.engine.backgroundTaskCount == 1 }, "only its retry waits")

        // The app fetches in history: the refusal drops the channel's history.
        _ = try await history.fetchSucceededMessages(.next)
        #expect(await harness.manager.engine.historyResetCount == 1)
        let newest = await server.messages(in: Harness.channel).suffix(5).map(\.messageId)
        #expect(
            await eventually { await live.succeededMessages.map(\.messageId) == newest },
            "the view at the newest messages shows them again, the clock not advanced")

        await clock.run()
        await harness.settle()
        try await server.post(.text("after the reset"), from: "bob", to: Harness.channel)
        await harness.settle()
        #expect(await live.succeededMessages.last?.text == "after the reset", "it follows the channel")
        await checkInvariants(live, liveEvents)
        await harness.manager.close()
    }
}
