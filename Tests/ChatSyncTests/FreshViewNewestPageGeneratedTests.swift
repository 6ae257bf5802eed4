import ChatSyncTesting
import Logging
import Testing

@testable import ChatSync

/// Views opened at `.max`, offline on an empty cache, then a connection that drops
/// requests and breaks now and then while others post. Once the faults stop and the
/// connection comes back, every view shows at least its newest page, contiguous up to
/// the channel's newest message, without the app ever fetching (Guarantees: Live
/// updates and reconnect). Found: a completion of the newest page that the service did
/// not answer, or that the connection cut short, was never resumed; the view stayed
/// short (often empty) until the app fetched, which nothing on an empty screen prompts.
///
/// Each view's owed page is tried at most 1 + 8 times per connection, counted by the
/// engine and, for the views together, at the service. The faults that reach the retry
/// chains: spells in which no older page is answered (the pages stay owed into later
/// connections), and reconnects in quick succession, some while the engine is busy (the
/// changes handled in one batch), some holding a request in flight across them. Found:
/// a connection that flapped while the engine was busy was synced twice, and its owed
/// pages resumed twice (a view tried 10 times on one connection).
@Suite("Fresh views' newest pages, generated", .capturingLogs)
struct FreshViewNewestPageGeneratedTests {
    static let seeds = ScheduleSeeds.freshViews

    @Test(arguments: 0..<4)
    func freshViewsGetTheirNewestPageOverAFlakyConnection(batch: Int) async {
        await Self.seeds.run(batch: batch, of: 4) { seed in try await Self.schedule(seed) }
    }

    private static func schedule(_ seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let (harness, olderPages) = try await Harness.makeWrapped(
            seed: seed,
            configure: {
                $0.syncBatchSize = Int.random(in: 1...6, using: &random)
                $0.logger = Logger(label: "fresh-\(seed)")
            },
            wrapper: OlderPageFaults.init(base:))
        let tries = LockedState<[TryKey: TryCount]>([:])
        await harness.manager.engine.setNewestPageTryWitness { view, epoch, afterProgress in
            tries.withLock { $0[TryKey(view: view, epoch: epoch), default: TryCount()].count(afterProgress: afterProgress) }
        }
        let server = harness.server
        let senders = ["bob", "carol", "alice"]
        for index in 0..<Int.random(in: 0...60, using: &random) {
            let params: MessageParams = index % 4 == 0 ? .custom(customType: "poll", data: "") : .text("h\(index)")
            try await server.post(params, from: senders.randomElement(using: &random)!, to: Harness.channel)
        }
        var subjects: [ModelSubject] = []
        for filter in [MessageFilter(), MessageFilter(senderIds: ["carol"]), MessageFilter(kinds: [.custom])] {
            let collection = try await harness.manager.messageCollection(
                channelURL: Harness.channel, filter: filter, limit: Int.random(in: 1...12, using: &random))
            let recorder = EventRecorder()
            await collection.setHandler(recorder)
            // Some screens fetch once while offline (nothing to show on an empty cache), some never.
            if Bool.random(using: &random) { _ = try await collection.fetchSucceededMessages(.previous) }
            subjects.append(ModelSubject(collection: collection, recorder: recorder, filter: filter))
        }
        var log: [String] = []
        var online = true  // the simulator starts with alice online; the manager is not running yet
        await server.setFaults(FaultPlan(failRequestRate: Double.random(in: 0.2...0.8, using: &random)))
        await harness.manager.resumeSync()
        for step in 0..<Int.random(in: 1...8, using: &random) {
            switch Int.random(in: 0..<5, using: &random) {
            case 4:
                // A spell in which the service answers no request for older messages:
                // the owed pages run through their tries and stay owed into later connections.
                let refusing = await !olderPages.refusesAll
                log.append(refusing ? "older pages refused" : "older pages answered")
                await olderPages.setRefusesAll(refusing)
            case 3 where online:
                try await quickReconnects(harness, olderPages, &random, &log)
            case 0, 3:
                online.toggle()
                log.append(online ? "online" : "offline")
                if online { await olderPages.startConnection() }
                await server.setOnline(online, for: "alice")
            case 1:
                let rate = Double.random(in: 0...0.8, using: &random)
                log.append("fail rate \(rate)")
                await server.setFaults(FaultPlan(failRequestRate: rate))
            default:
                // Posted while the views may be following: a live message enters them.
                let sender = senders.randomElement(using: &random)!
                log.append("post by \(sender)")
                try await server.post(.text("live \(step)"), from: sender, to: Harness.channel)
            }
            await harness.settle()
        }
        // The faults stop; the connection breaks once more and comes back.
        await server.setFaults(FaultPlan())
        await olderPages.setRefusesAll(false)
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await olderPages.startConnection()
        await server.setOnline(true, for: "alice")
        await harness.settle()
        // Each view's owed page is tried at most 1 + 8 times in a row per connection without
        // reaching further back (Guarantees: one chain of tries per connection, whose count
        // starts over after a try that got further), counted by the engine as each try
        // starts. Found: two chains on one connection (a fill counted as running only once
        // its task ran), which showed no wrong page, only doubled requests.
        let perView = 1 + SyncEngine.syncRetryLimit
        let counted = tries.withLock { $0 }.sorted { ($0.key.epoch, $0.key.view) < ($1.key.epoch, $1.key.view) }
        for (key, count) in counted where count.withoutProgress > perView * (1 + count.afterProgress) {
            let what =
                "view \(key.view) tried its newest page \(count.withoutProgress) times in epoch \(key.epoch) without getting further, "
                + "at most \(perView) after each of its \(count.afterProgress) tries that did"
            Issue.record("\(what); \(seeds.describe(seed)) steps \(log)")
        }
        // The same bound seen from the service, for the views together (their fills ask
        // the same unfiltered pages), while every request for older pages is refused (no
        // try gets further then): one more each for a try that was in flight when the
        // connection changed and is refused after it.
        let bound = subjects.count * (perView + 1)
        for (connection, count) in await olderPages.perConnection.enumerated() {  // and per spell
            #expect(
                count <= bound,
                "\(count) refused tries of older pages in connection or spell \(connection), at most \(bound); \(seeds.describe(seed)) steps \(log)"
            )
        }

        let truth = await server.messages(in: Harness.channel)
        for subject in subjects {
            let context = "\(seeds.describe(seed)) \(subject.filter) limit \(subject.collection.limit); steps \(log)"
            let matching = truth.filter(subject.filter.matches)
            let shown = await checkInvariants(subject.collection, subject.recorder, context: context)
            #expect(
                shown.count >= min(subject.collection.limit, matching.count),
                "at least the newest page: \(shown.count) of \(matching.count) shown; \(context)")
            #expect(
                shown.map(\.messageId) == matching.suffix(shown.count).map(\.messageId),
                "contiguous up to the newest message; \(context)")
            if !log.contains(where: { $0.hasPrefix("post") }) {
                // Nothing arrived live: the view shows its newest page and no more.
                #expect(shown.count == min(subject.collection.limit, matching.count), "exactly the newest page; \(context)")
            }
        }
        await harness.manager.close()
    }

    /// The connection breaks and comes back, once or a few times in a row, without
    /// waiting for the work each return starts: the next break finds tries in flight,
    /// waiting for their backoff, or not yet resumed. Some do it while the engine is busy,
    /// so that all the changes are handled in one batch. Some hold the next request for
    /// older messages in flight across the breaks that follow, then answer it (refused,
    /// or as the faults say) after one of the returns: before or after that return resumed
    /// the owed pages.
    private static func quickReconnects(
        _ harness: Harness, _ olderPages: OlderPageFaults, _ random: inout SeededGenerator, _ log: inout [String]
    ) async throws {
        let (server, engine) = (harness.server, harness.manager.engine)
        let flaps = Int.random(in: 1...3, using: &random)
        let releaseAfter = Bool.random(using: &random) ? Int.random(in: 0..<flaps, using: &random) : nil
        let busy = Int.random(in: 0..<3, using: &random) == 0
        log.append(
            "\(flaps) quick reconnects" + (busy ? " handled in one batch" : "")
                + (releaseAfter.map { ", a request held until return \($0)" } ?? ""))
        if releaseAfter != nil { await olderPages.holdNext() }
        if busy { await engine.holdEventDrain() }
        let queued = await engine.handledOrQueuedEventCount
        for flap in 0..<flaps {
            let epoch = await engine.epoch
            await server.setOnline(false, for: "alice")
            if !busy {
                // The break is handled (a new epoch) before the connection comes back.
                try #require(await eventually { await engine.epoch > epoch }, "the break is handled")
            }
            // Busy, the engine goes on in its old connection until it handles the changes.
            if !busy { await olderPages.startConnection() }
            await server.setOnline(true, for: "alice")
            for _ in 0..<Int.random(in: 0...60, using: &random) { await Task.yield() }
            if flap == releaseAfter { await olderPages.release(refusing: Bool.random(using: &random)) }
        }
        if busy {
            try #require(
                await eventually { await engine.handledOrQueuedEventCount == queued + 2 * flaps }, "the changes wait")
            await olderPages.startConnection()
            await engine.releaseEventDrain()
        }
        await olderPages.release(refusing: false)
    }
}

/// One view's tries in one connection (the engine's epoch).
private struct TryKey: Hashable {
    let view: Int
    let epoch: Int
}

/// A view's tries in one connection: those that came after a try that reached further
/// back (each starts the count over) and the others.
private struct TryCount {
    var afterProgress = 0
    var withoutProgress = 0

    mutating func count(afterProgress progressed: Bool) {
        if progressed { afterProgress += 1 } else { withoutProgress += 1 }
    }
}

/// The schedule's faults on requests for older messages (spells that refuse them all, a
/// request held in flight across reconnects), and the count, per connection the schedule
/// opens and per spell, of those it refused: each ends one try of a view's owed newest
/// page (a `.previous` fill stops at its first unanswered request) that got no further.
/// Requests at `.max` (a channel going live) and for newer messages (catch-ups) are
/// neither faulted nor counted, nor are those the service's fault plan fails.
private actor OlderPageFaults: ForwardingChatService {
    let base: any ChatService
    /// One entry per connection and per spell of refusals, the first being the manager's first connection.
    private(set) var perConnection = [0]

    private var holdsNext = false
    private var held: CheckedContinuation<Bool, Never>?

    /// Whether every request for older messages is refused (a spell of the schedule).
    private(set) var refusesAll = false

    init(base: any ChatService) { self.base = base }

    /// A spell of refusals counts apart from what came before it in its connection: a try
    /// that got further between two spells starts its view's count over.
    func setRefusesAll(_ refusing: Bool) {
        if refusing, !refusesAll { perConnection.append(0) }
        refusesAll = refusing
    }

    /// The schedule brings the connection back: what is refused from here counts for a new one.
    func startConnection() { perConnection.append(0) }

    /// Holds the next request for older messages in flight until ``release(refusing:)``.
    func holdNext() { holdsNext = true }
    /// Answers the held request (refused, or passed on to the service), or stops waiting for one.
    func release(refusing: Bool) {
        holdsNext = false
        held?.resume(returning: refusing)
        held = nil
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        let isOlder = query.timestamp != .max && query.prevLimit > 0
        if holdsNext, isOlder {
            holdsNext = false
            if await withCheckedContinuation({ held = $0 }) {
                perConnection[perConnection.count - 1] += 1
                throw ChatServiceError.transient(.network, "held across a reconnect, then refused by the test")
            }
        }
        if refusesAll, isOlder {
            perConnection[perConnection.count - 1] += 1
            throw ChatServiceError.transient(.network, "older pages refused by the test")
        }
        return try await base.fetchMessages(query)
    }
}
