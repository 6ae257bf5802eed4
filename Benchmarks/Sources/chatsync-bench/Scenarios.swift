import ChatSync
import ChatSyncTesting
import Foundation
import Synchronization

/// One line of the results table.
struct Result {
    var scenario: String
    var ours: String
    var baseline: String
    var ratio: String
    var target: String
    var met: Bool?
}

/// The sizes of a run: the full one, or `--quick` for CI.
struct Sizes {
    var ingest = 100_000
    var ingestRuns = 5
    var bigCache = (channels: 1_000, perChannel: 1_000)
    var firstPageRuns = 20
    var scrollChannel = 100_000
    var scrollWalks = 10
    var sends = 10_000
    var sendRuns = 3
    var relaunch = (channels: 10, perChannel: 1_000)
    var relaunchRuns = 3
    var memory = (small: 10_000, large: 1_000_000)
    /// Scenario 7: messages ingested, across how many channels, the capacity, and the rounds
    /// (each runs unlimited, then bounded; the medians are compared).
    var boundedIngest = (messages: 1_000_000, channels: 100, capacity: 100_000, rounds: 3)
    /// Scenario 8: the small and the large channel caches, and the timed runs.
    var channelList = (small: 1_000, large: 100_000, runs: 20)
    /// Scenario 9: real-time messages, open views, and messages posted one at a time.
    var liveFanIn = (messages: 20_000, views: 10, paced: 1_000)
    /// Scenario 10: the cache's channels and messages per channel, and the timed starts.
    var appStart = (channels: 1_000, perChannel: 1_000, runs: 10)
    /// Scenario 11: open channels, messages in each (every one edited or deleted), and the
    /// rounds (each a new day offline; the median is reported: one round lasts about 0.1 s,
    /// where this machine's scheduling noise alone moves a single run by half).
    var changeLogs = (channels: 50, perChannel: 100, rounds: 7)

    static let quick = Sizes(
        ingest: 5_000, ingestRuns: 2, bigCache: (50, 200), firstPageRuns: 5, scrollChannel: 5_000, scrollWalks: 3, sends: 1_000,
        sendRuns: 1, relaunch: (5, 100), relaunchRuns: 1, memory: (2_000, 20_000), boundedIngest: (20_000, 10, 2_000, 1),
        channelList: (1_000, 10_000, 5), liveFanIn: (1_000, 10, 100), appStart: (50, 200, 2), changeLogs: (10, 50, 1))
}

struct Scenarios {
    let sizes: Sizes
    let directory: URL

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func ratio(_ ours: Double, _ baseline: Double) -> String { String(format: "%.2f×", ours / baseline) }

    // MARK: 1. Ingest

    func ingest() async throws -> Result {
        let server = SimulatedChatServer()
        try await server.createChannel("bench", members: ["alice", "bob"])
        for index in 0..<sizes.ingest {
            try await server.post(.text("message \(index): a line of chat of a typical length"), from: "bob", to: "bench")
        }
        let messages = await server.messages(in: "bench")
        var ours: [Double] = []
        var baseline: [Double] = []
        for run in 0..<sizes.ingestRuns {
            let file = path("ingest-\(run).sqlite")
            try? FileManager.default.removeItem(atPath: file)
            let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: file)
            await manager.resumeSync()
            let collection = try await manager.messageCollection(channelURL: "bench", limit: 100)
            ours.append(try await measure { while try await collection.fetchSucceededMessages(.previous) {} })
            await manager.close()

            // The same rows, batched 100 per transaction, through one prepared statement, in the order
            // background sync receives them: the newest batch first (it scrolls back from the present),
            // each batch oldest to newest. Inserting the batches oldest first instead appends every key
            // at the right edge of the b-trees and splits fewer pages, a cheaper job than ours.
            let rawFile = path("ingest-raw-\(run).sqlite")
            try await CacheBuilder.build(at: rawFile, channels: [], perChannel: 0)
            let database = try RawSQLite(path: rawFile)
            let insert = try database.prepare("INSERT INTO message (\(CacheBuilder.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            baseline.append(
                try await measure {
                    for end in stride(from: messages.count, to: 0, by: -100) {
                        try database.exec("BEGIN")
                        for message in messages[max(0, end - 100)..<end] {
                            try insert.insert(message)
                        }
                        try database.exec("COMMIT")
                    }
                })
        }
        let oursMedian = Sample(values: ours).median
        let rate = Double(sizes.ingest) / (oursMedian / 1_000_000)
        let baseRate = Double(sizes.ingest) / (Sample(values: baseline).median / 1_000_000)
        return Result(
            scenario: "1. ingest \(sizes.ingest.formatted()) messages (background sync, batches of 100)",
            ours: String(format: "%.0f msg/s (p99 run %@)", rate, format(Sample(values: ours).p99)),
            baseline: String(format: "%.0f msg/s", baseRate), ratio: ratio(oursMedian, Sample(values: baseline).median),
            target: "≤ 1.5× time; ≥ 150,000 msg/s", met: oursMedian <= 1.5 * Sample(values: baseline).median && rate >= 150_000)
    }

    // MARK: 2. Open and first page

    func firstPage() async throws -> [Result] {
        let file = path("big.sqlite")
        let channels = (0..<sizes.bigCache.channels).map { "c\($0)" }
        try await CacheBuilder.build(at: file, channels: channels, perChannel: sizes.bigCache.perChannel)
        try await CacheBuilder.sanityCheck(path: file, channel: "c1", expected: sizes.bigCache.perChannel)
        let target = channels[channels.count / 2]
        // The bare query runs in the same loop as ours, so that both see the same phase of
        // the machine: measured apart, the two medians came from moments whose speed
        // differed by up to 2× (the bare query at 38 µs in one run, 111 µs in the next), and
        // the ratio said more of that than of ChatSync.
        let database = try RawSQLite(path: file)
        let query = try database.prepare(
            "SELECT \(CacheBuilder.columns) FROM message WHERE channel_url = ? AND (created_at, message_id) <= (?, ?) "
                + "ORDER BY created_at DESC, message_id DESC LIMIT 50")
        func timeQuery() async -> Double {
            await measure {
                query.bind(1, target)
                query.bind(2, Int64.max)
                query.bind(3, Int64.max)
                blackHole(query.readRows(columns: 10))
            }
        }
        var opens: [Double] = []
        var pages: [Double] = []
        var raw: [Double] = []
        for _ in 0..<sizes.firstPageRuns {
            var manager: SyncManager?
            opens.append(
                try await measure {
                    manager = try await SyncManager(
                        userId: "bench", service: SimulatedChatServer().service(for: "bench"), databasePath: file)
                })
            var delivered = 0
            // The collection outlives the clock, as an app's does while it shows the page:
            // released inside the timed closure, its `deinit` started the task that removes
            // its view, and the page was charged about 20 µs (a thread woken) for closing it.
            var collection: MessageCollection?
            pages.append(
                try await measure {
                    collection = try await manager!.messageCollection(channelURL: target, limit: 50)
                    _ = try await collection!.fetchSucceededMessages(.previous)
                    delivered = await collection!.messageCount
                })
            guard delivered == 50 else { throw BenchError("first page delivered \(delivered)") }
            await collection?.remove()
            // After the close, so that no work the manager left running competes with it, and
            // as it was measured back to back: twenty runs, their median counted (once the
            // manager moved the file's change counter, the first run reads the pages again,
            // and the first few ran at up to twice the hot loop's time).
            await manager!.close()
            var runs: [Double] = []
            for _ in 0..<20 {
                runs.append(await timeQuery())
            }
            raw.append(Sample(values: runs).median)
        }
        // The bare query back to back, as it was measured before: for comparison only.
        var backToBack: [Double] = []
        for _ in 0..<sizes.firstPageRuns {
            backToBack.append(await timeQuery())
        }
        let total = sizes.bigCache.channels * sizes.bigCache.perChannel
        let page = Sample(values: pages)
        let open = Sample(values: opens)
        return [
            Result(
                scenario: "2a. open a SyncManager on a \(total.formatted())-message cache",
                ours: "\(format(open.median)) (p99 \(format(open.p99)))", baseline: "", ratio: "", target: "≤ 50 ms",
                met: open.median <= 50_000),
            Result(
                scenario: "2b. messageCollection + first page of 50 (\(sizes.bigCache.channels.formatted()) channels)",
                ours: "\(format(page.median)) (p99 \(format(page.p99)))",
                baseline:
                    "\(format(Sample(values: raw).median)) (one range query, run after each page; "
                    + "\(format(Sample(values: backToBack).median)) back to back)",
                ratio: ratio(page.median, Sample(values: raw).median),
                target: "≤ 3× and ≤ 2 ms", met: page.median <= 2_000 && page.median <= 3 * Sample(values: raw).median),
        ]
    }

    // MARK: 3. Scroll

    func scroll() async throws -> Result {
        let file = path("scroll.sqlite")
        try await CacheBuilder.build(at: file, channels: ["long"], perChannel: sizes.scrollChannel)
        let database = try RawSQLite(path: file)
        let query = try database.prepare(
            "SELECT \(CacheBuilder.columns) FROM message WHERE channel_url = ? AND (created_at, message_id) < (?, ?) "
                + "ORDER BY created_at DESC, message_id DESC LIMIT 50")
        var raw: [Double] = []
        // The bare walk follows each of ours, so that both see the same phase of the machine
        // (its speed moves by up to 2× between minutes): measured after all of ours, a
        // full run compared a page timed on a slow phase with a query timed on a fast one.
        // Ours only reads, offline, so its manager leaves nothing running beside the bare walk;
        // closing a collection writes a row, so one untimed query first re-reads the pages
        // that write made stale for the bare connection.
        let pages = try await Self.scrollPages(file: file, walks: sizes.scrollWalks) {
            var anchor = (CacheBuilder.epoch + Int64(sizes.scrollChannel), Int64.max)
            query.bind(1, "long")
            query.bind(2, anchor.0)
            query.bind(3, anchor.1)
            blackHole(query.readRows(columns: 10))
            for _ in 0..<20 {
                raw.append(
                    await measure {
                        query.bind(1, "long")
                        query.bind(2, anchor.0)
                        query.bind(3, anchor.1)
                        blackHole(query.readRows(columns: 10))
                    })
                anchor.0 -= 50
            }
        }
        let ours = Sample(values: pages)
        let base = Sample(values: raw)
        return Result(
            scenario: "3. scroll back 20 pages of 50 in a \(sizes.scrollChannel.formatted())-message channel (cached)",
            ours: "\(format(ours.median)) per page (p99 \(format(ours.p99)))", baseline: "\(format(base.median)) per query",
            ratio: ratio(ours.median, base.median), target: "≤ 2× and ≤ 200 µs", met: ours.median <= 2 * base.median && ours.median <= 200)
    }

    /// Walks back 20 pages of 50, `walks` times, offline, running `afterEachWalk` between
    /// walks; answers each page's latency.
    static func scrollPages(file: String, walks: Int, afterEachWalk: () async -> Void = {}) async throws -> [Double] {
        let manager = try await SyncManager(userId: "bench", service: SimulatedChatServer().service(for: "bench"), databasePath: file)
        var pages: [Double] = []
        for _ in 0..<walks {
            let collection = try await manager.messageCollection(channelURL: "long", limit: 50)
            for _ in 0..<20 { pages.append(try await measure { _ = try await collection.fetchSucceededMessages(.previous) }) }
            guard await collection.messageCount == 1_000 else { throw BenchError("the walk delivered \(await collection.messageCount)") }
            await collection.remove()
            await afterEachWalk()
        }
        await manager.close()
        return pages
    }

    // MARK: 4. Send

    final class PendingClock: MessageCollectionHandler {
        let inserted = Mutex<ContinuousClock.Instant?>(nil)
        func collection(_ c: MessageCollection, didReceive action: MessageEventAction, pendingMessages: [Message]) {
            if action == .insert { inserted.withLock { $0 = ContinuousClock.now } }
        }
    }

    func send() async throws -> [Result] {
        var calls: [Double] = []
        var toEvent: [Double] = []
        var totals: [Double] = []
        var raw: [Double] = []
        for run in 0..<sizes.sendRuns {
            let file = path("send-\(run).sqlite")
            try? FileManager.default.removeItem(atPath: file)
            // Offline, as the row says: every call is the outbox's own work, with no lane
            // sending beside it (the simulator starts its users connected).
            let server = SimulatedChatServer()
            await server.setOnline(false, for: "alice")
            let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: file)
            let collection = try await manager.messageCollection(channelURL: "bench")
            let handler = PendingClock()
            await collection.setHandler(handler)
            totals.append(
                try await measure {
                    for index in 0..<sizes.sends {
                        let start = ContinuousClock.now
                        _ = try await manager.sendMessage(
                            .text("message \(index): a line of chat of a typical length"), channelURL: "bench")
                        let end = ContinuousClock.now
                        calls.append(start.duration(to: end).microseconds)
                        toEvent.append(start.duration(to: handler.inserted.withLock { $0 } ?? end).microseconds)
                    }
                })
            await manager.close()
            // The bare inserts follow each of our runs, once the manager is closed (nothing of
            // it runs beside them), so that both see the same phase of the machine: measured
            // after all of ours, a full run compared calls timed on a slow phase with
            // transactions timed on a fast one (62 µs against 24 µs, 2.53×).
            raw += try await rawSends(file: path("send-raw-\(run).sqlite"))
        }
        let call = Sample(values: calls)
        let base = Sample(values: raw)
        let rate = Double(sizes.sends) / (Sample(values: totals).median / 1_000_000)
        return [
            Result(
                scenario: "4a. sendMessage offline, \(sizes.sends.formatted()) calls",
                ours: String(format: "%.0f calls/s; %@ per call (p99 %@)", rate, format(call.median), format(call.p99)),
                baseline: "\(format(base.median)) per single-row transaction", ratio: ratio(call.median, base.median),
                target: "≤ 2×; ≥ 20,000 calls/s", met: call.median <= 2 * base.median && rate >= 20_000),
            Result(
                scenario: "4b. sendMessage call to its .pending(.insert) event",
                ours: "\(format(Sample(values: toEvent).median)) (p99 \(format(Sample(values: toEvent).p99)))", baseline: "", ratio: "",
                target: "≤ 1 ms", met: Sample(values: toEvent).p99 <= 1_000),
        ]
    }

    /// The baseline of one run of scenario 4: as many single-row transactions into a new
    /// cache's outbox as the run sends; answers each one's time.
    private func rawSends(file: String) async throws -> [Double] {
        try await CacheBuilder.build(at: file, channels: [], perChannel: 0)
        let database = try RawSQLite(path: file)
        let insert = try database.prepare(
            "INSERT INTO outbox (req_id, channel_url, lane, state, message_id, created_at, sender_id, kind, text, custom_type, data, "
                + "updated_at, origin) VALUES (?, 'bench', 'text', 'created', 0, ?, 'alice', 'text', ?, '', '', ?, 'outbox')")
        var raw: [Double] = []
        raw.reserveCapacity(sizes.sends)
        for index in 0..<sizes.sends {
            raw.append(
                try await measure {
                    insert.bind(1, RawRequestId.make())
                    insert.bind(2, Int64(index))
                    insert.bind(3, "message \(index): a line of chat of a typical length")
                    insert.bind(4, Int64(index))
                    try insert.run()  // autocommit: one transaction per row
                })
        }
        return raw
    }

    // MARK: 5. Relaunch

    func relaunch() async throws -> Result {
        var times: [Double] = []
        var requests: [Int] = []
        var lookUps: [Int] = []
        let total = sizes.relaunch.channels * sizes.relaunch.perChannel
        for run in 0..<sizes.relaunchRuns {
            let server = SimulatedChatServer()
            let channels = (0..<sizes.relaunch.channels).map { "r\($0)" }
            for channel in channels { try await server.createChannel(channel, members: ["alice"]) }
            var options = SyncManagerOptions()
            options.maxFailedMessageCountPerChannel = 1_000
            let file = path("relaunch-\(run).sqlite")
            try? FileManager.default.removeItem(atPath: file)
            let writer = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: file, options: options)
            var lastOfChannel: [String] = []
            for channel in channels {
                var last = ""
                for index in 0..<sizes.relaunch.perChannel {
                    let message = try await writer.sendMessage(.text("in flight \(index)"), channelURL: channel)
                    if index % 2 == 0 {  // half of them reached the server before the app died
                        _ = try await server.service(for: "alice").sendMessage(
                            SendMessageRequest(reqId: message.reqId, channelURL: channel, kind: .text, text: message.text))
                    }
                    last = message.reqId
                }
                lastOfChannel.append(last)
            }
            await writer.close()
            let database = try RawSQLite(path: file)
            try database.exec("UPDATE outbox SET state = 'syncing'; PRAGMA wal_checkpoint(TRUNCATE)")
            let before = (await server.requestCount, await server.lookUpCount)
            var reopened: SyncManager?
            times.append(
                try await measure {
                    let manager = try await SyncManager(
                        userId: "alice", service: server.service(for: "alice"), databasePath: file, options: options)
                    reopened = manager
                    await manager.resumeSync()
                    for reqId in lastOfChannel {
                        while await manager.message(reqId: reqId)?.syncState == .syncing { try await Task.sleep(for: .microseconds(200)) }
                    }
                })
            requests.append(await server.requestCount - before.0)
            lookUps.append(await server.lookUpCount - before.1)
            await reopened?.close()
        }
        let time = Sample(values: times)
        // The look-ups reconcile; the reconnect also asks for the channel change logs once.
        let perHundred = Double(lookUps.max() ?? 0) / (Double(total) / 100)
        return Result(
            scenario: "5. relaunch: reconcile \(total.formatted()) in-flight outbox rows",
            ours:
                "\(format(time.median)) (slowest \(format(time.p99))), \(lookUps.max() ?? 0) look-ups (\(requests.max() ?? 0) requests in all)",
            baseline: "", ratio: "", target: "≤ 1 s, ≤ 1 look-up / 100", met: time.median <= 1_000_000 && perHundred <= 1)
    }

    // MARK: 6. Memory

    func memory(executable: String) async throws -> Result {
        var peaks: [Int] = []
        for (name, count) in [("small", sizes.memory.small), ("large", sizes.memory.large)] {
            let file = path("memory-\(name).sqlite")
            try await CacheBuilder.build(at: file, channels: ["long"], perChannel: count)
            peaks.append(try runProbe(executable, "--memory-probe", file))
        }
        let growth = Double(peaks[1] - peaks[0]) / 1024
        return Result(
            scenario:
                "6. peak memory of scenario 3, \(sizes.memory.small.formatted()) vs \(sizes.memory.large.formatted()) cached messages",
            ours: String(format: "%.1f MB vs %.1f MB (growth %.1f MB)", Double(peaks[0]) / 1024, Double(peaks[1]) / 1024, growth),
            baseline: "", ratio: "", target: "growth ≤ 10 MB", met: growth <= 10)
    }
}
