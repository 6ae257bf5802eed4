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
@Suite("Fresh views' newest pages, generated", .capturingLogs)
struct FreshViewNewestPageGeneratedTests {
    static let seeds = ScheduleSeeds.freshViews

    @Test(arguments: 0..<4)
    func freshViewsGetTheirNewestPageOverAFlakyConnection(batch: Int) async {
        await Self.seeds.run(batch: batch, of: 4) { seed in try await Self.schedule(seed) }
    }

    private static func schedule(_ seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let harness = try await Harness.make(seed: seed) {
            $0.syncBatchSize = Int.random(in: 1...6, using: &random)
            $0.logger = Logger(label: "fresh-\(seed)")
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
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                online.toggle()
                log.append(online ? "online" : "offline")
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
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await server.setOnline(true, for: "alice")
        await harness.settle()

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
}
