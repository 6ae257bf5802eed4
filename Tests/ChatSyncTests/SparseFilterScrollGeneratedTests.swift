import ChatSyncTesting
import Logging
import Testing

@testable import ChatSync

/// A filtered collection scrolled through a long channel whose messages rarely match,
/// on a cache capped at 200 messages, with a trim forced before every page the engine
/// asks of the service (where a background trim may or may not come). Such a view spans
/// many cached messages for the few it shows, so every trim finds the cache over its
/// capacity and takes what lies beyond the view's window: the batch the view fetched a
/// moment before, unless the view holds that range already.
///
/// Online and without faults, each fetch must deliver its `limit` or reach the channel's
/// end (API.md §3.1), following `hasMore` must reach that end with a bounded number of
/// requests, and the view must show every matching message between its ends once.
/// Found: scrolling `.next`, the fill read a chunk to its end and asked the service for
/// the next batch, the trim took that batch back (it lay beyond the view's upper
/// bound, which only moves with matching messages), and the two took turns for ever.
@Suite("Sparse filters scrolled under trims, generated", .capturingLogs)
struct SparseFilterScrollGeneratedTests {
    static let seeds = ScheduleSeeds.sparseScroll

    @Test(arguments: 0..<4)
    func sparseFiltersScrollToEitherEndUnderTrims(batch: Int) async {
        await Self.seeds.run(batch: batch, of: 4) { seed in try await Self.schedule(seed) }
    }

    private static func schedule(_ seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let batchSize = Int.random(in: 1...40, using: &random)
        let (harness, pages) = try await Harness.makeWrapped(
            seed: seed,
            configure: {
                $0.messageStoreCapacity = 200
                $0.messageCollectionCapacity = 200
                $0.syncBatchSize = batchSize
                $0.logger = Logger(label: "sparse-\(seed)")
            },
            wrapper: TrimBeforeEachPage.init(base:))
        let engine = harness.manager.engine
        await engine.setEvictionStepSize(Int.random(in: 1...40, using: &random))
        await pages.setBefore { await engine.trimNow() }
        let server = harness.server
        // One message in `every` matches the filter: carol's, or a custom one.
        let every = Int.random(in: 3...40, using: &random)
        let byKind = Bool.random(using: &random)
        let filter = byKind ? MessageFilter(kinds: [.custom]) : MessageFilter(senderIds: ["carol"])
        func post(_ index: Int) async throws {
            let matches = Int.random(in: 0..<every, using: &random) == 0
            let params: MessageParams = byKind && matches ? .custom(customType: "poll", data: "") : .text("m\(index)")
            try await server.post(params, from: !byKind && matches ? "carol" : "bob", to: Harness.channel)
        }
        let count = Int.random(in: 250...600, using: &random)
        for index in 0..<count { try await post(index) }
        await harness.online()
        var log = ["\(count) messages, 1 in \(every) matching \(filter), batches of \(batchSize)"]
        // The newest messages cached by an earlier visit: the cache starts near its capacity.
        let earlier = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 50)
        for _ in 0..<Int.random(in: 0...4, using: &random) { _ = try await earlier.fetchSucceededMessages(.previous) }
        await earlier.remove()
        await harness.settle()
        let all = await server.messages(in: Harness.channel)
        let viewpoint = Bool.random(using: &random) ? 0 : all[Int.random(in: 0..<(all.count / 2), using: &random)].createdAt
        let collection = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: filter, viewpoint: viewpoint, limit: Int.random(in: 1...15, using: &random))
        log.append("viewpoint \(viewpoint), limit \(collection.limit)")
        // A request budget far above what reaching both ends takes: a fill that goes round
        // in circles runs out of it (the service then refuses for good) instead of hanging.
        await pages.setBudget(8 * (count / batchSize + 1) + 200)
        let directions: [Direction] =
            switch Int.random(in: 0..<3, using: &random) {
            case 0: [.next]
            case 1: [.previous, .next]
            default: [.next, .previous]
            }
        for direction in directions {
            var hasMore = true
            while hasMore {
                if Int.random(in: 0..<4, using: &random) == 0 {
                    // Others post meanwhile: the newest end moves on.
                    let posts = Int.random(in: 1...20, using: &random)
                    log.append("\(posts) posts")
                    for index in 0..<posts { try await post(count + index) }
                    await harness.settle()
                }
                let before = await collection.succeededMessages
                hasMore = try await collection.fetchSucceededMessages(direction)
                let after = await collection.succeededMessages
                let beyond = after.count { message in
                    switch direction {
                    case .previous: before.first.map { message.sortKey < $0.sortKey } ?? true
                    case .next: before.last.map { message.sortKey > $0.sortKey } ?? true
                    }
                }
                log.append("\(direction): \(beyond) beyond the edge, hasMore \(hasMore)")
                #expect(
                    !hasMore || beyond >= collection.limit,
                    "seed \(seed): a \(direction) fetch answered hasMore after \(beyond) of \(collection.limit); \(log.suffix(8))")
                guard !hasMore || beyond > 0 else { break }
            }
            await harness.settle()
            let truth = await server.messages(in: Harness.channel).filter(filter.matches)
            let shown = await collection.succeededMessages
            // Scrolled back from the viewpoint, an empty view is at its end when nothing
            // matching lies before the viewpoint.
            let end =
                direction == .next
                ? truth.last : shown.isEmpty ? truth.last { $0.createdAt <= viewpoint } : truth.first
            let edge = direction == .next ? shown.last : shown.first
            let state = await engine.describeView(collection.id)
            #expect(
                edge?.messageId == end?.messageId,
                "seed \(seed): scrolled \(direction) to the channel's end: \(state); \(log.suffix(8))")
        }
        let shown = await collection.succeededMessages
        let expected = serverRange(await server.messages(in: Harness.channel), filter, from: shown.first, to: shown.last)
        #expect(shown.map(\.messageId) == expected.map(\.messageId), "seed \(seed): each matching message once, no gap; \(log)")
        let store = engine.store
        let cached = await server.messages(in: Harness.channel)
        for chunk in try store.chunks(channelURL: Harness.channel) {
            let missing = try cached.filter {
                try chunk.contains($0.sortKey) && store.message(channelURL: Harness.channel, messageId: $0.messageId) == nil
            }
            #expect(missing.isEmpty, "seed \(seed): range \(chunk.start)...\(chunk.end) claims \(missing.count) evicted messages")
        }
        await collection.remove()
        await harness.manager.close()
    }
}

/// Runs a hook before each page of messages it forwards (the test forces a trim there),
/// and refuses for good once a budget of such requests is spent.
actor TrimBeforeEachPage: ForwardingChatService {
    nonisolated let base: any ChatService
    private var before: (@Sendable () async -> Void)?
    private var budget = Int.max
    private(set) var requests = 0

    init(base: any ChatService) { self.base = base }

    func setBefore(_ hook: @escaping @Sendable () async -> Void) { before = hook }

    /// Refuses every page request past `count` from now on.
    func setBudget(_ count: Int) {
        budget = count
        requests = 0
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        requests += 1
        guard requests <= budget else {
            throw ChatServiceError.permanent(.invalid, "\(budget) page requests spent: the fill goes round in circles")
        }
        await before?()
        return try await base.fetchMessages(query)
    }
}
