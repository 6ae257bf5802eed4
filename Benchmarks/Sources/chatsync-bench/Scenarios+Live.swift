import ChatSync
import ChatSyncTesting
import Foundation
import Synchronization

// Scenarios 9 to 11 (issue 17): real-time traffic fanned out to many views, an app's start
// on a large cache, and a day's edits and deletions applied on reconnect.

extension Scenarios {
    // MARK: 9. Live fan-in

    /// Records, per message, when the last view that should show it received its insert.
    final class Arrivals: MessageCollectionHandler {
        struct State {
            /// Views that still have to receive each message.
            var awaited: [Int64: Int] = [:]
            var completed: [Int64: ContinuousClock.Instant] = [:]
            var early: [Int64: Int] = [:]
            /// Waiting for a message to complete, resumed with its completion time.
            var waiters: [Int64: CheckedContinuation<ContinuousClock.Instant, Never>] = [:]
        }
        let state = Mutex(State())

        /// A message was posted that `views` views show.
        func expect(_ messageId: Int64, views: Int) {
            state.withLock { state in
                let seen = state.early.removeValue(forKey: messageId) ?? 0
                if seen >= views { state.completed[messageId] = .now } else { state.awaited[messageId] = views - seen }
            }
        }

        /// Resumes every waiter (the run failed), so that nothing waits for ever.
        func abandonWaiters() {
            let waiters = state.withLock { state in
                defer { state.waiters.removeAll() }
                return state.waiters.values
            }
            for waiter in waiters { waiter.resume(returning: .now) }
        }

        /// When the last view received `messageId`'s insert: waits for it without polling,
        /// so that the measurement takes no CPU from the engine while it catches up.
        func completion(of messageId: Int64) async -> ContinuousClock.Instant {
            await withCheckedContinuation { waiter in
                let done: ContinuousClock.Instant? = state.withLock { state in
                    if let done = state.completed[messageId] { return done }
                    state.waiters[messageId] = waiter
                    return nil
                }
                if let done { waiter.resume(returning: done) }
            }
        }
        var completedCount: Int { state.withLock { $0.completed.count } }

        func collection(_ c: MessageCollection, didReceive action: MessageEventAction, succeededMessages: [Message]) {
            guard action == .insert else { return }
            let now = ContinuousClock.now
            state.withLock { state in
                for message in succeededMessages {
                    guard let left = state.awaited[message.messageId] else {
                        // The event came before the poster registered it.
                        state.early[message.messageId, default: 0] += 1
                        continue
                    }
                    if left == 1 {
                        state.awaited[message.messageId] = nil
                        state.completed[message.messageId] = now
                        state.waiters.removeValue(forKey: message.messageId)?.resume(returning: now)
                    } else {
                        state.awaited[message.messageId] = left - 1
                    }
                }
            }
        }
    }

    /// Real-time messages from two senders reach a channel with views open on it, half of
    /// them filtered to one sender. First as fast as the simulator posts (throughput, to the
    /// last view's event of the last message), then one at a time (each message's delay
    /// from the post to the last view's event). The baseline stores the same messages the
    /// fewest way a live message can be stored: one autocommitted insert each.
    func liveFanIn() async throws -> [Result] {
        let (count, viewCount, paced) = sizes.liveFanIn
        let server = SimulatedChatServer()
        try await server.createChannel("live", members: ["alice", "bob", "carol"])
        let file = path("live.sqlite")
        try? FileManager.default.removeItem(atPath: file)
        let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: file)
        await manager.resumeSync()
        let arrivals = Arrivals()
        var collections: [MessageCollection] = []
        for index in 0..<viewCount {
            let filter = index % 2 == 0 ? MessageFilter() : MessageFilter(senderIds: ["bob"])
            let collection = try await manager.messageCollection(channelURL: "live", filter: filter, limit: 100)
            await collection.setHandler(arrivals)
            _ = try await collection.fetchSucceededMessages(.previous)  // an empty channel: at its live edge
            collections.append(collection)
        }
        func post(_ index: Int) async throws -> (Int64, ContinuousClock.Instant) {
            let sender = index % 2 == 0 ? "bob" : "carol"
            let start = ContinuousClock.now
            let message = try await server.post(.text("live \(index): a line of chat of a typical length"), from: sender, to: "live")
            arrivals.expect(message.messageId, views: sender == "bob" ? viewCount : (viewCount + 1) / 2)
            return (message.messageId, start)
        }
        func waitFor(_ messageId: Int64) async throws -> ContinuousClock.Instant {
            // A lost event fails the run after two minutes, never hangs it.
            try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { group in
                group.addTask { await arrivals.completion(of: messageId) }
                group.addTask {
                    try await Task.sleep(for: .seconds(120))
                    arrivals.abandonWaiters()
                    throw BenchError("message \(messageId) never reached every view")
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        }

        let start = ContinuousClock.now
        var last: Int64 = 0
        for index in 0..<count { last = try await post(index).0 }
        let burst = start.duration(to: try await waitFor(last)).microseconds
        var delays: [Double] = []
        for index in count..<(count + paced) {
            let (messageId, posted) = try await post(index)
            delays.append(posted.duration(to: try await waitFor(messageId)).microseconds)
        }
        guard arrivals.completedCount == count + paced else { throw BenchError("not every message reached every view") }
        for collection in collections { await collection.remove() }
        await manager.close()

        let rawFile = path("live-raw.sqlite")
        try await CacheBuilder.build(at: rawFile, channels: [], perChannel: 0)
        let database = try RawSQLite(path: rawFile)
        let insert = try database.prepare(
            "INSERT INTO message (\(CacheBuilder.columns)) VALUES ('live', ?, ?, '', 'bob', 'text', ?, '', '', ?)")
        let raw = try await measure {
            for index in 0..<count {
                let time = CacheBuilder.epoch + Int64(index)
                insert.bind(1, time)
                insert.bind(2, Int64(index + 1))
                insert.bind(3, "live \(index): a line of chat of a typical length")
                insert.bind(4, time)
                try insert.run()  // autocommit: one transaction per message
            }
        }
        let rate = Double(count) / (burst / 1_000_000)
        let delay = Sample(values: delays)
        return [
            Result(
                scenario: "9a. live fan-in: \(count.formatted()) real-time messages, \(viewCount) open views (half filtered)",
                ours: String(format: "%.0f msg/s", rate),
                baseline: String(format: "%.0f msg/s (one insert each)", Double(count) / (raw / 1_000_000)),
                ratio: ratio(burst, raw), target: "≥ 20,000 msg/s", met: rate >= 20_000),
            Result(
                scenario: "9b. live fan-in: one message's post to the last view's insert event (\(paced.formatted()) paced)",
                ours: "\(format(delay.median)) (p99 \(format(delay.p99)))", baseline: "", ratio: "", target: "p99 ≤ 5 ms",
                met: delay.p99 <= 5_000),
        ]
    }

    // MARK: 10. App start

    /// Opens a manager on a cache of many channels and messages, then shows the channel
    /// list's first page and the first page of its top channel: what an app does at launch.
    func appStart() async throws -> Result {
        let (channelCount, perChannel, runs) = sizes.appStart
        let file = path("start.sqlite")
        let channels = (0..<channelCount).map { CacheBuilder.channelURL($0) }
        try await CacheBuilder.build(at: file, channels: channels, perChannel: perChannel)
        try CacheBuilder.insertChannels(at: file, count: channelCount)
        let top = channels[channelCount - 1]  // the most recent channel heads the list
        var starts: [Double] = []
        for _ in 0..<runs {
            var manager: SyncManager?
            var list: ChannelCollection?
            var collection: MessageCollection?
            starts.append(
                try await measure {
                    manager = try await SyncManager(
                        userId: "bench", service: SimulatedChatServer().service(for: "bench"), databasePath: file)
                    list = try await manager!.channelCollection(query: ChannelListQuery(limit: 50))
                    _ = try await list!.fetch()
                    collection = try await manager!.messageCollection(channelURL: top, limit: 50)
                    _ = try await collection!.fetchSucceededMessages(.previous)
                })
            let shown = (await list!.channels.count, await list!.channels.first?.channelURL, await collection!.messageCount)
            guard shown == (50, top, 50) else { throw BenchError("app start showed \(shown)") }
            await manager!.close()
        }
        var raw: [Double] = []
        for _ in 0..<runs {
            raw.append(
                try await measure {
                    let database = try RawSQLite(path: file)
                    let list = try database.prepare(
                        "SELECT channel_url, name, member_ids, created_at, last_activity_at FROM channel "
                            + "ORDER BY last_activity_at DESC, channel_url LIMIT 50")
                    blackHole(list.readRows(columns: 5))
                    let page = try database.prepare(
                        "SELECT \(CacheBuilder.columns) FROM message WHERE channel_url = ? ORDER BY created_at DESC, message_id DESC LIMIT 50"
                    )
                    page.bind(1, top)
                    blackHole(page.readRows(columns: 10))
                })
        }
        let start = Sample(values: starts)
        let base = Sample(values: raw)
        let total = channelCount * perChannel
        return Result(
            scenario:
                "10. app start: open on \(total.formatted()) messages in \(channelCount.formatted()) channels, first channel page, first page of the top channel",
            ours: "\(format(start.median)) (p99 \(format(start.p99)))", baseline: "\(format(base.median)) (open and two queries)",
            ratio: ratio(start.median, base.median), target: "≤ 10 ms", met: start.median <= 10_000)
    }

    // MARK: 11. Change logs after a day offline

    /// Counts the updates and removals the views receive, and when the last one came.
    final class ChangeCounter: MessageCollectionHandler {
        let state = Mutex((changes: 0, target: Int.max, done: ContinuousClock.Instant?.none))

        func collection(_ c: MessageCollection, didReceive action: MessageEventAction, succeededMessages: [Message]) {
            guard action == .update || action == .remove else { return }
            let now = ContinuousClock.now
            state.withLock { state in
                state.changes += succeededMessages.count
                if state.changes >= state.target, state.done == nil { state.done = now }
            }
        }
    }

    /// Channels cached and open; the user goes offline, half their messages are edited and
    /// half deleted on the server; back online, the change logs bring every view up to date.
    /// Timed from the reconnect to the last view's last event, over several rounds (the
    /// median is reported). The baseline applies the same edits and deletions with raw
    /// statements, a page of `syncBatchSize` per transaction, as many rounds.
    func changeLogsAfterADayOffline() async throws -> Result {
        let (channelCount, perChannel, rounds) = sizes.changeLogs
        var times: [Double] = []
        var raws: [Double] = []
        var changes = 0
        for _ in 0..<rounds {
            let (elapsed, count) = try await oneDayOffline(channelCount: channelCount, perChannel: perChannel)
            times.append(elapsed)
            changes = count
            raws.append(try await rawDayOffline(channelCount: channelCount, perChannel: perChannel))
        }
        let (elapsed, raw) = (Sample(values: times).median, Sample(values: raws).median)
        let rate = Double(changes) / (elapsed / 1_000_000)
        return Result(
            scenario:
                "11. change logs after a day offline: \(changes.formatted()) edits and deletions across \(channelCount) open channels",
            ours: String(format: "%.0f changes/s (%@, median of %d)", rate, format(elapsed), rounds),
            baseline: String(format: "%.0f changes/s", Double(changes) / (raw / 1_000_000)), ratio: ratio(elapsed, raw),
            target: "≥ 50,000 changes/s", met: rate >= 50_000)
    }

    /// One round of scenario 11: answers the time from the reconnect to the last view's
    /// last event, and the number of changes.
    private func oneDayOffline(channelCount: Int, perChannel: Int) async throws -> (Double, Int) {
        let server = SimulatedChatServer()
        let channels = (0..<channelCount).map { "day\($0)" }
        for channel in channels {
            try await server.createChannel(channel, members: ["alice", "bob"])
            for index in 0..<perChannel {
                try await server.post(.text("message \(index): a line of chat of a typical length"), from: "bob", to: channel)
            }
        }
        let file = path("day.sqlite")
        RawSQLite.removeDatabase(at: file)
        let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: file)
        await manager.resumeSync()
        let counter = ChangeCounter()
        var collections: [MessageCollection] = []
        for channel in channels {
            let collection = try await manager.messageCollection(channelURL: channel, limit: perChannel)
            await collection.setHandler(counter)
            while try await collection.fetchSucceededMessages(.previous) {}
            collections.append(collection)
        }
        await server.setOnline(false, for: "alice")
        var changes = 0
        for channel in channels {
            for (index, message) in await server.messages(in: channel).enumerated() {
                if index % 2 == 0 {
                    _ = try await server.update(messageId: message.messageId, channelURL: channel, text: "edited while alice was away")
                } else {
                    try await server.delete(messageId: message.messageId, channelURL: channel)
                }
                changes += 1
            }
        }
        counter.state.withLock { $0.target = changes }
        let reconnected = ContinuousClock.now
        await server.setOnline(true, for: "alice")
        let deadline = ContinuousClock.now + .seconds(120)  // a lost event fails the run, never hangs it
        while counter.state.withLock({ $0.done }) == nil {
            guard ContinuousClock.now < deadline else {
                throw BenchError("the views got \(counter.state.withLock { $0.changes }) of \(changes) changes")
            }
            try await Task.sleep(for: .microseconds(100))
        }
        let elapsed = reconnected.duration(to: counter.state.withLock { $0.done! }).microseconds
        for collection in collections { await collection.remove() }
        await manager.close()
        return (elapsed, changes)
    }

    /// The baseline of one round of scenario 11.
    private func rawDayOffline(channelCount: Int, perChannel: Int) async throws -> Double {
        let channels = (0..<channelCount).map { "day\($0)" }
        let rawFile = path("day-raw.sqlite")
        try await CacheBuilder.build(at: rawFile, channels: channels, perChannel: perChannel)
        let database = try RawSQLite(path: rawFile)
        let update = try database.prepare("UPDATE message SET text = ?, updated_at = ? WHERE channel_url = ? AND message_id = ?")
        let delete = try database.prepare("DELETE FROM message WHERE channel_url = ? AND message_id = ?")
        let batch = SyncManagerOptions().syncBatchSize
        return try await measure {
            var messageId: Int64 = 0
            for channel in channels {
                for start in stride(from: 0, to: perChannel, by: batch) {
                    try database.exec("BEGIN")
                    for index in start..<min(start + batch, perChannel) {
                        messageId += 1
                        if index % 2 == 0 {
                            update.bind(1, "edited while alice was away")
                            update.bind(2, CacheBuilder.epoch + 1_000_000)
                            update.bind(3, channel)
                            update.bind(4, messageId)
                            try update.run()
                        } else {
                            delete.bind(1, channel)
                            delete.bind(2, messageId)
                            try delete.run()
                        }
                    }
                    try database.exec("COMMIT")
                }
            }
        }
    }
}
