import ChatSyncTesting
import Logging
import Testing

@testable import ChatSync

/// Views opened inside the ranges the sync stored a moment before, after others edited
/// or deleted messages there, on and off line (issue 17). A fill serves the batch it
/// stored last from memory instead of reading it back (``StoredBatch``): only while
/// nothing changed the cache since. These schedules change it between the store and the
/// next read of the same range, and check that every view shows the server's messages
/// between its ends, with their latest text, once online, and the cache's offline.
@Suite("Cache reads after writes, generated", .capturingLogs)
struct CacheReadsAfterWritesGeneratedTests {
    static let seeds = ScheduleSeeds.cacheReads

    /// The channel besides `general`, its history posted between general's, so that the
    /// two channels' key ranges overlap and a read of one may start inside the other's
    /// stored batch.
    static let side = "side"

    /// Senders besides bob: carol, and zoë spelled two ways (a precomposed ë, and an e with
    /// a combining diaeresis). Swift's `==` takes the two for one; a service, and the
    /// cache's SQL, take them for two users. A view filtered to one of them must show its
    /// messages only, whether they came live, from the service or from the cache.
    static let senders = ["carol", "zo\u{EB}", "zoe\u{308}"]

    @Test(arguments: 0..<4)
    func viewsOpenedInsideJustSyncedRangesShowTheLatestMessages(batch: Int) async {
        var answered = 0
        await Self.seeds.run(batch: batch, of: 4) { seed in answered += try await Self.schedule(seed) }
        // The path these schedules try to break is taken: reads answered from the batch.
        if !Self.seeds.batch(batch, of: 4).isEmpty {
            #expect(answered > 0, "no read was answered from the stored batch")
        }
    }

    /// Answers how many cache reads the stored batch answered.
    private static func schedule(_ seed: UInt64) async throws -> Int {
        var random = SeededGenerator(seed: seed)
        let batchSize = Int.random(in: 3...30, using: &random)
        let harness = try await Harness.make(
            seed: seed,
            configure: {
                $0.syncBatchSize = batchSize
                $0.logger = Logger(label: "cache-reads-\(seed)")
            })
        let server = harness.server
        try await server.createChannel(side, members: ["alice", "bob"] + senders)
        for sender in senders { try await server.addMember(sender, to: Harness.channel) }
        for index in 0..<Int.random(in: 40...160, using: &random) {
            try await server.post(.text("h\(index)"), from: "bob", to: random.chance(0.5) ? Harness.channel : side)
        }
        let context = Self.seeds.describe(seed)
        await harness.online()
        var online = true
        var views: [(collection: MessageCollection, filter: MessageFilter)] = []
        let channels = [Harness.channel, side]
        var log = ["batches of \(batchSize)"]
        for step in 0..<16 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0...3:
                // A view opened where another just fetched, or anywhere.
                let shown = await views.randomElement(using: &random)?.collection.succeededMessages ?? []
                let channelURL = channels.randomElement(using: &random)!
                let all = await server.messages(in: channelURL)
                let viewpoint: Int64 =
                    if !shown.isEmpty, random.chance(0.7) {
                        shown.randomElement(using: &random)!.createdAt
                    } else if random.chance(0.2) {
                        .max
                    } else {
                        all.randomElement(using: &random)?.createdAt ?? 0
                    }
                let sender = senders.randomElement(using: &random)!
                let filter = random.chance(0.35) ? MessageFilter(senderIds: [sender]) : MessageFilter()
                let collection = try await harness.manager.messageCollection(
                    channelURL: channelURL, filter: filter, viewpoint: viewpoint,
                    limit: Int.random(in: 1...15, using: &random))
                views.append((collection, filter))
                if views.count > 3 { await views.removeFirst().collection.remove() }
                let shownSender = filter.isEmpty ? "all" : "\(sender.unicodeScalars.map(\.value))'s"  // scalars: two spellings
                log.append("open \(channelURL) at \(viewpoint) (limit \(collection.limit), \(shownSender))")
                try await fetch(collection, &random, &log)
            case 4...5:
                if let view = views.randomElement(using: &random) { try await fetch(view.collection, &random, &log) }
            case 6...7:
                // Others change messages, most often ones a view shows (the range just stored).
                let view = views.randomElement(using: &random)?.collection
                let shown = await view?.succeededMessages ?? []
                let channelURL = view?.channelURL ?? channels.randomElement(using: &random)!
                let all = await server.messages(in: channelURL)
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let pool = !shown.isEmpty && random.chance(0.7) ? shown : all
                    guard let target = pool.randomElement(using: &random) else { break }
                    if random.chance(0.5) {
                        _ = try? await server.update(messageId: target.messageId, channelURL: channelURL, text: "edited \(step)")
                        log.append("edit \(target.messageId)")
                    } else {
                        try? await server.delete(messageId: target.messageId, channelURL: channelURL)
                        log.append("delete \(target.messageId)")
                    }
                }
            case 8:
                for index in 0..<Int.random(in: 1...5, using: &random) {
                    try await server.post(
                        .text("p\(step).\(index)"), from: random.chance(0.4) ? "bob" : senders.randomElement(using: &random)!,
                        to: channels.randomElement(using: &random)!)
                }
                log.append("posts")
            default:
                online.toggle()
                await server.setOnline(online, for: "alice")
                log.append(online ? "online" : "offline")
            }
            await harness.settle()
            try await check(views, harness, online: online, context: "\(context) step \(step): \(log.suffix(8))")
        }
        let answered = await harness.manager.engine.storedBatchAnswers
        await harness.manager.close()
        return answered
    }

    private static func fetch(_ collection: MessageCollection, _ random: inout SeededGenerator, _ log: inout [String]) async throws {
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let direction: Direction = random.chance(0.5) ? .previous : .next
            _ = try? await collection.fetchSucceededMessages(direction)
            log.append("fetch \(direction)")
        }
    }

    /// Online, each view equals the server between its ends, with the latest texts;
    /// offline, each shows what the cache holds.
    private static func check(
        _ views: [(collection: MessageCollection, filter: MessageFilter)], _ harness: Harness, online: Bool, context: String
    ) async throws {
        let store = harness.manager.engine.store
        for (collection, filter) in views {
            let truth = await harness.server.messages(in: collection.channelURL)
            let shown = await collection.succeededMessages
            if online {
                let expected = truth.filter { message in
                    // The filter's own `matches` is what is under test: bytes, as a service compares ids.
                    let sender = filter.senderIds.map { $0.contains { Array($0.utf8) == Array(message.senderId.utf8) } } ?? true
                    guard sender, let first = shown.first, let last = shown.last else { return false }
                    return message.sortKey >= first.sortKey && message.sortKey <= last.sortKey
                }
                #expect(shown.map(\.messageId) == expected.map(\.messageId), "\(context): the view equals the server between its ends")
                let stale = zip(shown, expected).filter { $0.text != $1.text }.map(\.0.messageId)
                #expect(stale.isEmpty, "\(context): the view shows the latest texts; stale \(stale)")
            } else {
                let differing = try shown.filter {
                    try store.message(channelURL: collection.channelURL, messageId: $0.messageId)?.text != $0.text
                }
                #expect(differing.isEmpty, "\(context): offline, the view shows the cache; differing \(differing.map(\.messageId))")
            }
        }
    }
}
