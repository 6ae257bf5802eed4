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
        let (harness, refusing) = try await Harness.makeWrapped(
            configure: { $0.syncBatchSize = 3 }, wrapper: OlderPagesRefused.init(base:))
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

    /// One connection tries a refused completion at most 1 + 8 times, counted from its
    /// start: the connection breaks and comes back while a retry waits, the reconnect
    /// starts the completion's tries afresh, and the retry that waited stops. Before the
    /// chain counter, the waiting retry went on beside the reconnect's, two chains on one
    /// connection (a second reader found it; no test did).
    @Test func aReconnectWhileARetryWaitsLeavesOneChainOfTries() async throws {
        let (clock, harness, refusing, carol, _) = try await Self.carolsFillRefused()
        let tries = Tries(clock: clock, refusing: refusing, harness: harness, viewId: carol.id)
        await tries.run(after: [1], from: 1)  // the first retry, refused; the second waits 2 s

        try await Self.breakAndRestoreConnection(harness)
        #expect(await tries.ended(at: 3), "the reconnect resumed it at once")
        await tries.run(after: Tries.everyRetry, from: 3)
        await harness.settle()
        #expect(await refusing.refused == 3 + SyncEngine.syncRetryLimit, "the reconnect's tries, and no other")
        #expect(await harness.manager.engine.owesNewestPage(viewId: carol.id), "still owed to the next connection")
    }

    /// A try in flight when the connection breaks and comes back ends refused on the new
    /// connection: the new connection's retries start from the first, not from where the
    /// old connection's stopped, and the reconnect starts no second fill beside it.
    @Test func aTryInFlightAcrossAReconnectStartsTheNewConnectionsRetriesAfresh() async throws {
        let (clock, harness, refusing, carol, _) = try await Self.carolsFillRefused()
        let engine = harness.manager.engine
        let tries = Tries(clock: clock, refusing: refusing, harness: harness, viewId: carol.id)
        await tries.run(after: [1, 2], from: 1)  // the third retry waits 4 s
        await refusing.holdNextRefusal()
        await clock.advance(by: .seconds(4))
        #expect(await tries.eventuallyWakingLateSleeps { await refusing.isHolding }, "the fourth try is in flight")

        let chain = await engine.newestPageChain(viewId: carol.id) ?? -1
        try await Self.breakAndRestoreConnection(harness)
        #expect(await eventually { await engine.newestPageChain(viewId: carol.id) == chain + 1 }, "the reconnect took it over")
        await refusing.release()
        #expect(await tries.ended(at: 4))
        await tries.run(after: Tries.everyRetry, from: 4)
        await harness.settle()
        #expect(await refusing.refused == 4 + SyncEngine.syncRetryLimit, "the new connection's retries, all of them, once")
        #expect(await engine.owesNewestPage(viewId: carol.id))
    }

    /// A retry of the old connection that comes due after the connection is back but
    /// before the reconnect resumed the page (its catch-up is still in flight) stops: the
    /// resume gives the new connection its 1 + 8 tries, and no try of the old chain's
    /// count runs beside them. Before, that retry made one more try on the old count.
    @Test func aRetryOfTheOldConnectionDueBeforeTheResumeStops() async throws {
        let (clock, harness, refusing, carol, _) = try await Self.carolsFillRefused()
        let engine = harness.manager.engine
        let tries = Tries(clock: clock, refusing: refusing, harness: harness, viewId: carol.id)
        await tries.run(after: [1], from: 1)  // the second retry waits 2 s
        await refusing.holdNextCatchUp()
        try await Self.breakAndRestoreConnection(harness)
        #expect(await eventually { await refusing.isHolding }, "the reconnect's catch-up is in flight")
        let tasks = await engine.backgroundTaskCount
        await clock.advance(by: .seconds(2))
        // Its task ends without starting a fill (whose task would keep the count up).
        let stopped = await tries.eventuallyWakingLateSleeps { await engine.backgroundTaskCount < tasks }
        #expect(stopped, "the old connection's retry ended without a try")
        #expect(await refusing.refused == 2)

        await refusing.release()
        #expect(await tries.ended(at: 3), "the reconnect resumed it")
        await tries.run(after: Tries.everyRetry, from: 3)
        await harness.settle()
        #expect(await refusing.refused == 3 + SyncEngine.syncRetryLimit, "the new connection's tries, and no other")
    }

    /// Alice's connection breaks and comes back, each seen by her manager; a retry may
    /// be waiting on the clock meanwhile, so this cannot wait for the manager to settle.
    private static func breakAndRestoreConnection(_ harness: Harness) async throws {
        let (server, engine) = (harness.server, harness.manager.engine)
        await server.setOnline(false, for: "alice")
        #expect(await eventually { await !engine.isOnline }, "the break is seen")
        await server.setOnline(true, for: "alice")
        #expect(await eventually { await engine.isOnline }, "the return is seen")
    }

    /// The refused tries of carol's owed page, stepped through on the test's clock.
    private struct Tries {
        /// The waits before a connection's retries: 1, 2, 4 … 30 s, `syncRetryLimit` of them.
        static let everyRetry = [1, 2, 4, 8, 16, 30, 30, 30]
        let clock: TestClock<Duration>
        let refusing: OlderPagesRefused
        let harness: Harness
        let viewId: Int

        /// Whether the `count`th refused try has ended: refused, and its fill over, so its
        /// retry's deadline is set (moving the clock before that would move the deadline).
        func ended(at count: Int) async -> Bool {
            let engine = harness.manager.engine
            guard await eventuallyWakingLateSleeps({ await refusing.refused == count }) else { return false }
            return await eventually { await !engine.isFillingNewestPage(viewId: viewId) }
        }

        /// Waits for `condition`, moving the clock by nothing meanwhile, which wakes a
        /// retry whose sleep began only after the clock reached its deadline (`TestClock`
        /// keeps such a sleep until the next move): the test cannot see when a sleep
        /// begins once another one (of a chain that should stop) is waiting already.
        func eventuallyWakingLateSleeps(_ condition: () async -> Bool) async -> Bool {
            await eventually(turns: 5_000) {
                await clock.advance(by: .zero)
                return await condition()
            }
        }

        /// From the `count`th refused try on, moves the clock by each wait in turn, and
        /// checks that each wait ends in exactly one more refused try.
        func run(after waits: [Int], from count: Int) async {
            #expect(SyncEngine.syncRetryLimit == Self.everyRetry.count)
            for (index, wait) in waits.enumerated() {
                #expect(await ended(at: count + index), "try \(count + index) ended")
                await clock.advance(by: .seconds(wait))
            }
            // The last wait's try too: its sleep may have begun after the clock reached it.
            #expect(await ended(at: count + waits.count), "try \(count + waits.count) ended")
        }
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
        try await Harness.makeWrapped(
            configure: {
                $0.syncBatchSize = 3
                $0.clock = clock
            },
            wrapper: OlderPagesRefused.init(base:))
    }
}

/// Refuses, while told to, every request for messages older than a given place (a
/// transient error, as a dropped connection gives): the newest page, and pages newer
/// than a place (a reconnect's catch-up), are answered. When told to, it holds the next
/// refusal, or the next catch-up, until released, so that a test can act while that
/// request is in flight.
private actor OlderPagesRefused: ForwardingChatService {
    let base: any ChatService
    /// Answers what this wrapper does not refuse, holding a catch-up when told to.
    private let catchUps: CatchUpHolder
    private(set) var refused = 0
    private var refusing = false
    private var holdsNext = false
    private var held: CheckedContinuation<Void, Never>?

    init(base: any ChatService) {
        self.base = base
        catchUps = CatchUpHolder(base: base)
    }

    func setRefusing(_ refusing: Bool) { self.refusing = refusing }
    func holdNextRefusal() { holdsNext = true }
    /// Holds the next request for newer messages (a reconnect's catch-up), then answers it.
    func holdNextCatchUp() async { await catchUps.holdNextCatchUp() }
    var isHolding: Bool {
        get async {
            if held != nil { return true }
            return await catchUps.isHolding
        }
    }
    func release() async {
        held?.resume()
        held = nil
        await catchUps.release()
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if refusing, query.timestamp != .max, query.prevLimit > 0 {
            if holdsNext {
                holdsNext = false
                await withCheckedContinuation { held = $0 }
            }
            refused += 1
            throw ChatServiceError.transient(.network, "refused by the test")
        }
        return try await catchUps.fetchMessages(query)
    }
}
