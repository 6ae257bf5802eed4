import ChatSyncTesting
import Clocks
import Testing

@testable import ChatSync

/// A view opened at `.max` that holds nothing yet (offline on an empty cache, say)
/// shows its newest page once the channel goes live, even where the newest batch the
/// reconnect brings holds less than a page of its messages. Before, a view filtered to
/// carol showed nothing at all while carol's newest messages lay just below that batch,
/// until the app fetched again (model seed 233).
@Suite("A fresh view's newest page", .capturingLogs)
struct FreshViewNewestPageTests {
    /// Posts `count` messages, every fifth one by carol.
    private static func post(_ count: Int, on server: SimulatedChatServer) async throws {
        for index in 0..<count {
            try await server.post(.text("m\(index)"), from: index % 5 == 0 ? "carol" : "bob", to: Harness.channel)
        }
    }

    /// Forty messages on the server (every fifth by carol), and a collection of carol's
    /// opened at `.max` and fetched once before alice's manager runs: offline, on an empty cache.
    private static func carolsViewOpenedOffline(
        _ harness: Harness, limit: Int
    ) async throws -> (MessageCollection, EventRecorder) {
        try await post(40, on: harness.server)
        let carol = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: MessageFilter(senderIds: ["carol"]), limit: limit)
        let events = EventRecorder()
        await carol.setHandler(events)
        #expect(try await carol.fetchSucceededMessages(.previous), "offline: the end is unknown")
        #expect(await carol.succeededMessages.isEmpty, "offline on an empty cache there is nothing to show")
        return (carol, events)
    }

    @Test func aFilteredViewOpenedOfflineShowsItsNewestPageOnceOnline() async throws {
        let harness = try await Harness.make { $0.syncBatchSize = 3 }
        let server = harness.server
        let (carol, events) = try await Self.carolsViewOpenedOffline(harness, limit: 4)

        await harness.online()

        let truth = await server.messages(in: Harness.channel).filter { $0.senderId == "carol" }
        #expect(await carol.succeededMessages.map(\.messageId) == truth.suffix(4).map(\.messageId), "carol's newest page")
        await checkInvariants(carol, events)
        // And it follows the channel from there.
        try await server.post(.text("carol again"), from: "carol", to: Harness.channel)
        await harness.settle()
        #expect(await carol.succeededMessages.last?.text == "carol again")
    }

    @Test func anUnfilteredViewGetsAFullPageNotOnlyTheNewestBatch() async throws {
        let harness = try await Harness.make(history: 30) { $0.syncBatchSize = 3 }
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.online()
        let truth = await harness.server.messages(in: Harness.channel)
        #expect(await view.succeededMessages.map(\.messageId) == truth.suffix(10).map(\.messageId))
        // The app's next fetch goes on from the page's oldest message, skipping none.
        _ = try await view.fetchSucceededMessages(.previous)
        #expect(await view.succeededMessages.map(\.messageId) == truth.suffix(20).map(\.messageId))
    }

    @Test func aViewThatNeverFetchedShowsOnlyWhatCameAfterTheCacheItOpenedOn() async throws {
        let harness = try await Harness.make(history: 10) { $0.syncBatchSize = 3 }
        let server = harness.server
        // Cached: the channel's first ten messages, as one range.
        try await harness.cacheNewestRangeThenGoOffline(limit: 10)
        let live = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 8)
        try await Self.post(5, on: server)
        await server.setOnline(true, for: "alice")
        await harness.settle()
        // Real time proves the channel live: the view shows what came after it opened, no
        // older message, though its page is not full.
        try await server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()
        let truth = await server.messages(in: Harness.channel)
        #expect(await live.succeededMessages.map(\.messageId) == truth.suffix(6).map(\.messageId))
    }

    @Test func whenTheFillIsNotAnsweredTheViewKeepsWhatItGotAndTheAppsNextFetchGoesOn() async throws {
        var wrapper: OlderPagesRefused?
        let harness = try await Harness.make(
            configure: { $0.syncBatchSize = 3 },
            wrapping: { service in
                let refusing = OlderPagesRefused(base: service)
                wrapper = refusing
                return refusing
            })
        let refusing = try #require(wrapper)
        let server = harness.server
        let (carol, events) = try await Self.carolsViewOpenedOffline(harness, limit: 5)
        await refusing.setRefusing(true)
        await harness.online()
        #expect(await refusing.refused > 0, "the fill asked, and was not answered")
        #expect(await carol.succeededMessages.isEmpty, "the newest batch holds none of carol's messages")

        await refusing.setRefusing(false)
        #expect(try await carol.fetchSucceededMessages(.previous))
        let truth = await server.messages(in: Harness.channel).filter { $0.senderId == "carol" }
        #expect(await carol.succeededMessages.map(\.messageId) == truth.suffix(5).map(\.messageId), "nothing skipped")
        await checkInvariants(carol, events)
    }

    /// The same unanswered fill, on a clock the test moves: the completion is tried again
    /// after 1 s, and the empty screen fills without the app fetching. Before, it stayed
    /// empty until the app fetched again, which nothing on an empty screen prompts.
    @Test func anUnansweredFillIsTriedAgainAfterABackoff() async throws {
        let (clock, harness, refusing, carol, events) = try await Self.carolsFillRefused()
        #expect(await sleeperRegistered(on: clock), "a retry waits on the clock")
        #expect(await refusing.refused > 0, "the fill asked, and was not answered")
        #expect(await carol.succeededMessages.isEmpty)

        await refusing.setRefusing(false)
        await clock.advance(by: .seconds(1))
        await harness.settle()
        let truth = await harness.server.messages(in: Harness.channel).filter { $0.senderId == "carol" }
        #expect(await carol.succeededMessages.map(\.messageId) == truth.suffix(5).map(\.messageId), "carol's newest page, no fetch")
        await checkInvariants(carol, events)
        // The app's next fetch goes on from the page's oldest message, skipping none.
        _ = try await carol.fetchSucceededMessages(.previous)
        #expect(await carol.succeededMessages.map(\.messageId) == truth.suffix(8).map(\.messageId))
    }

    /// The connection breaks while the completion is owed, after this connection's
    /// retries ran out: the reconnect resumes it (nothing else is left that could).
    @Test func aFillLeftOwedIsResumedByTheReconnect() async throws {
        let (clock, harness, refusing, carol, events) = try await Self.carolsFillRefused()
        let server = harness.server
        for delay in [1, 2, 4, 8, 16, 30, 30, 30] {
            #expect(await sleeperRegistered(on: clock), "retry after \(delay) s")
            await clock.advance(by: .seconds(delay))
        }
        #expect(SyncEngine.syncRetryLimit == 8)
        await harness.settle()
        #expect(await carol.succeededMessages.isEmpty, "every retry of this connection was refused")
        #expect(await harness.manager.engine.owesNewestPage(viewId: carol.id), "and the completion is still owed")

        await server.setOnline(false, for: "alice")
        await harness.settle()
        await refusing.setRefusing(false)
        await server.setOnline(true, for: "alice")
        await harness.settle()
        let truth = await server.messages(in: Harness.channel).filter { $0.senderId == "carol" }
        #expect(await carol.succeededMessages.map(\.messageId) == truth.suffix(5).map(\.messageId), "the reconnect completed it")
        #expect(await !harness.manager.engine.owesNewestPage(viewId: carol.id))
        await checkInvariants(carol, events)
    }

    /// A reset viewpoint drops the owed completion: its retry delivers nothing to the reset view.
    @Test func aViewpointResetDropsTheOwedCompletion() async throws {
        let (clock, harness, refusing, carol, events) = try await Self.carolsFillRefused()
        #expect(await sleeperRegistered(on: clock))
        let all = await harness.server.messages(in: Harness.channel)
        try await carol.resetViewpointTimestamp(all[0].createdAt)
        await refusing.setRefusing(false)
        await clock.advance(by: .seconds(30))
        await harness.settle()
        #expect(await carol.succeededMessages.isEmpty, "the reset view waits for the app's fetch")
        #expect(await !harness.manager.engine.owesNewestPage(viewId: carol.id))
        _ = try await carol.fetchSucceededMessages(.next)
        #expect(await carol.succeededMessages.first?.senderId == "carol")
        await checkInvariants(carol, events)
    }

    /// Carol's view opened offline on an empty cache (limit 5), then alice's manager
    /// started on a clock the test moves, through a service refusing older pages: the
    /// completion of carol's newest page is refused.
    private static func carolsFillRefused() async throws -> (
        TestClock<Duration>, Harness, OlderPagesRefused, MessageCollection, EventRecorder
    ) {
        let clock = TestClock()
        let (harness, refusing) = try await harnessRefusingOlderPages(clock)
        let (carol, events) = try await carolsViewOpenedOffline(harness, limit: 5)
        await refusing.setRefusing(true)
        await harness.manager.resumeSync()
        return (clock, harness, refusing, carol, events)
    }

    /// Alice's manager, not yet running, on `clock`, talking through a service that
    /// refuses older pages when told to.
    private static func harnessRefusingOlderPages(_ clock: TestClock<Duration>) async throws -> (Harness, OlderPagesRefused) {
        var wrapper: OlderPagesRefused?
        let harness = try await Harness.make(
            configure: {
                $0.syncBatchSize = 3
                $0.clock = clock
            },
            wrapping: { service in
                let refusing = OlderPagesRefused(base: service)
                wrapper = refusing
                return refusing
            })
        return (harness, try #require(wrapper))
    }
}

/// Refuses, while told to, every request for messages older than a given place (a
/// transient error, as a dropped connection gives): only the newest page is answered.
private actor OlderPagesRefused: ForwardingChatService {
    let base: any ChatService
    private(set) var refused = 0
    private var refusing = false

    init(base: any ChatService) { self.base = base }

    func setRefusing(_ refusing: Bool) { self.refusing = refusing }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if refusing, query.timestamp != .max {
            refused += 1
            throw ChatServiceError.transient(.network, "refused by the test")
        }
        return try await base.fetchMessages(query)
    }
}
