import ChatSyncTesting
import Foundation
import GRDB
import Testing

@testable import ChatSync

/// Seeded schedules against a service that corrupts a share of its answers
/// (``HostileService``): the client must never crash, never lose or double a message
/// the user sent, and keep its cache and views consistent. `HOSTILE_SEEDS=N` runs more
/// seeds (CI: 400); `HOSTILE_SEED=N` replays one.
@Suite("Hostile responses", .capturingLogs)
struct HostileResponseTests {
    static let batchCount = 8

    @Test(arguments: 0..<batchCount)
    func corruptAnswersNeverCrashLoseOrDouble(batch: Int) async throws {
        var corrupted = 0
        let batchSeeds = ScheduleSeeds.hostile.batch(batch, of: Self.batchCount)
        await ScheduleSeeds.hostile.run(batch: batch, of: Self.batchCount) { corrupted += try await runSchedule(seed: $0) }
        // Reported so the README's figure can be checked: corrupted answers and events per batch.
        print("Hostile responses, batch \(batch): \(corrupted) corrupted answers or events")
        // On average a schedule corrupts about six answers: fewer than one each means the fuzzing stopped biting.
        #expect(corrupted >= batchSeeds.count, "the schedules corrupted answers (\(corrupted) in \(batchSeeds.count) schedules)")
    }

    private func makeManager(_ service: HostileService, path: String, options: SyncManagerOptions) async throws -> SyncManager {
        try await SyncManager(userId: "alice", service: service, databasePath: path, options: options)
    }

    /// Runs one schedule; answers how many answers were corrupted.
    private func runSchedule(seed: UInt64) async throws -> Int {
        var random = SeededGenerator(seed: seed &+ 7_000_000)
        // Bob's bursts queued behind a busy engine, drawn apart so the other steps stay as they were.
        var bursts = SeededGenerator(seed: seed &+ 16_000_000)
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let server = SimulatedChatServer(seed: seed)
        try await server.createChannel(Harness.channel, members: ["alice", "bob"])
        for index in 0..<Int.random(in: 0...30, using: &random) {
            try await server.post(.text("h\(index)"), from: "bob", to: Harness.channel)
        }
        let hostile = HostileService(server.service(for: "alice"), seed: seed, rate: 0.3)
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        options.messageResendPolicy = .manual
        options.sendRetryLimit = 3
        options.syncBatchSize = Int.random(in: 2...10, using: &random)
        options.maxFailedMessageCountPerChannel = 1000
        let path = dir.path("cache.sqlite")
        var harness = Harness(
            server: server, manager: try await makeManager(hostile, path: path, options: options), path: path, options: options)
        var subjects = try await open(harness)
        await harness.manager.resumeSync()
        await harness.settle(extraEvents: { await hostile.addedEvents })
        var sent: [String] = []
        var online = true
        var log: [String] = []
        let context = { (step: Int) in
            "\(ScheduleSeeds.hostile.describe(seed)) step \(step): \(log.suffix(6))"
        }

        for step in 0..<25 {
            let subject = subjects.randomElement(using: &random)!
            let all = await server.messages(in: Harness.channel)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                sent.append(try await harness.manager.sendMessage(.text("s\(step)"), channelURL: Harness.channel).reqId)
                log.append("send")
            case 25..<50:
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                log.append("fetch \(direction)")
                do { _ = try await subject.collection.fetchSucceededMessages(direction) } catch let error as ChatServiceError {
                    log.append("  refused: \(error)")
                }
            case 50..<62:
                log.append("bob posts")
                try await server.post(.text("b\(step)"), from: "bob", to: Harness.channel)
            case 62..<68:
                if let target = all.randomElement(using: &random) {
                    log.append("bob edits \(target.messageId)")
                    try await server.update(messageId: target.messageId, channelURL: Harness.channel, text: "e\(step)")
                }
            case 68..<72:
                if let target = all.filter({ $0.senderId == "alice" }).randomElement(using: &random) {
                    log.append("alice edits \(target.messageId)")
                    do {
                        _ = try await harness.manager.updateMessage(messageId: target.messageId, channelURL: Harness.channel, text: "mine")
                    } catch {
                        log.append("  refused: \(error)")
                    }
                }
            case 72..<80:
                online.toggle()
                log.append(online ? "online" : "offline")
                await server.setOnline(online, for: "alice")
            case 80..<88:
                log.append("relaunch")
                for subject in subjects { await subject.collection.remove() }
                await harness.manager.close()
                harness.manager = try await makeManager(hostile, path: path, options: options)
                subjects = try await open(harness)
                await harness.manager.resumeSync()
            default:
                let target = Bool.random(using: &random) || all.isEmpty ? Int64.max : all.randomElement(using: &random)!.createdAt
                log.append("reset to \(target)")
                try await subject.collection.resetViewpointTimestamp(target)
            }
            if Int.random(in: 0..<4, using: &bursts) == 0 {
                // Handled as one stretch, corrupted copies of its events among the real ones.
                let count = Int.random(in: 2...6, using: &bursts)
                log.append("bob posts \(count) while the engine is busy")
                try await harness.withEventsQueued {
                    for index in 0..<count { try await server.post(.text("q\(step).\(index)"), from: "bob", to: Harness.channel) }
                }
            }
            await harness.settle(extraEvents: { await hostile.addedEvents })
            try await check(harness, subjects, sent: sent, context: context(step))
        }

        // Healthy again: everything the user sent reaches the server exactly once.
        await hostile.setRate(0)
        await server.setOnline(true, for: "alice")
        await harness.settle(extraEvents: { await hostile.addedEvents })
        try await harness.resendFailedAndSettle(retryableOnly: false, extraEvents: { await hostile.addedEvents })
        let onServer = await server.messages(in: Harness.channel)
        for reqId in sent {
            #expect(onServer.filter { $0.reqId == reqId }.count == 1, "sent exactly once: \(reqId) \(context(25))")
        }
        #expect(try harness.outbox().isEmpty, "nothing left behind: \(context(25))")
        // What the cache holds of alice's messages is what the server stored.
        let byReqId = Dictionary(onServer.map { ($0.reqId, $0) }, uniquingKeysWith: { first, _ in first })
        let cached = try harness.manager.engine.store.read { db in
            try Row.fetchAll(db, sql: "SELECT req_id, message_id FROM message WHERE req_id != ''")
        }
        let ours = Set(sent)
        for row in cached where ours.contains(row["req_id"]) {
            let reqId: String = row["req_id"]
            let messageId: Int64 = row["message_id"]
            #expect(byReqId[reqId]?.messageId == messageId, "cached \(reqId) as \(messageId): \(context(25))")
        }
        await harness.manager.close()
        return await hostile.corruptions.filter { !$0.hasPrefix("  ") }.count
    }

    private func open(_ harness: Harness) async throws -> [ModelSubject] {
        var subjects: [ModelSubject] = []
        for filter in [MessageFilter(), MessageFilter(senderIds: ["bob"])] {
            subjects.append(try await ModelSubject.open(harness.manager, filter: filter, limit: 8))
        }
        return subjects
    }

    /// The views keep their guarantees, the cache holds only well-formed rows, and no
    /// message the user sent has vanished (it is in the outbox or on the server).
    private func check(_ harness: Harness, _ subjects: [ModelSubject], sent: [String], context: String) async throws {

        for subject in subjects {
            let succeeded = await checkInvariants(subject.collection, subject.recorder, context: context)
            #expect(
                succeeded.allSatisfy { subject.filter.matches($0) && $0.channelURL == Harness.channel && $0.messageId > 0 },
                "a view holds a foreign or malformed message: \(context)")
            // What a view shows is what the cache holds, also when a stretch of real-time
            // events repeats a message with other content (the newest copy wins in both),
            // or a copy dated elsewhere (the view shows it where the cache holds it).
            let differing = try succeeded.filter { shown in
                guard !shown.isEditPending else { return false }
                let cached = try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: shown.messageId)
                return cached.map { $0.text != shown.text || $0.updatedAt != shown.updatedAt || $0.createdAt != shown.createdAt } ?? false
            }
            #expect(differing.isEmpty, "a view shows other content than the cache holds: \(differing.map(\.messageId)) \(context)")
        }
        let (badRows, badChunks) = try harness.manager.engine.store.read { db in
            (
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM message WHERE message_id <= 0 OR channel_url != ?",
                    arguments: [Harness.channel]) ?? 0,
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM chunk WHERE start_at > end_at OR (start_at = end_at AND start_id > end_id)") ?? 0
            )
        }
        #expect(badRows == 0, "malformed rows in the cache: \(context)")
        #expect(badChunks == 0, "reversed chunks in the cache: \(context)")
        let inOutbox = Set(try harness.outbox().map(\.reqId))
        let onServer = Set(await harness.server.messages(in: Harness.channel).map(\.reqId))
        for reqId in sent {
            #expect(inOutbox.contains(reqId) || onServer.contains(reqId), "a sent message vanished: \(reqId) \(context)")
        }
    }
}
