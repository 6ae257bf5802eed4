import ChatSync
import ChatSyncMatrix
import Foundation
import SynapseHarness
import Synchronization
import Testing

/// The seeds of the Synapse soak: `MATRIX_SOAK_SEED=n` replays one, `MATRIX_SOAK_SEEDS=n`
/// runs seeds 1…n (default 2: each seed is a minute of a real homeserver).
let matrixSoakSeeds: [UInt64] = {
    let environment = ProcessInfo.processInfo.environment
    if let seed = environment["MATRIX_SOAK_SEED"].flatMap(UInt64.init) { return [seed] }
    let count = environment["MATRIX_SOAK_SEEDS"].flatMap(UInt64.init) ?? 2
    return Array(1...max(1, count))
}()

/// One step of a soak schedule.
enum SoakStep: CaseIterable {
    case aliceSends, bobSends, bobEdits, bobRedacts, togglePause, relaunch, killHomeserver, settle

    /// Picks a step with fixed weights from one toss in 0..<100.
    static func pick(_ toss: Int) -> SoakStep {
        switch toss {
        case 0..<30: .aliceSends
        case 30..<50: .bobSends
        case 50..<60: .bobEdits
        case 60..<68: .bobRedacts
        case 68..<76: .togglePause
        case 76..<86: .relaunch
        case 86..<92: .killHomeserver
        default: .settle
        }
    }
}

/// Alice's side of a soak: her manager (replaced at each relaunch), her open view of the
/// room, and every failure any of her views reported.
final class SoakClient: Sendable {
    let world: World
    let coin: SeededRandom
    let everFailed = Mutex<Set<String>>([])
    private let current = Mutex<(SyncManager, MessageCollection, Task<Void, Never>)?>(nil)

    init(world: World, coin: SeededRandom) {
        self.world = world
        self.coin = coin
    }

    var manager: SyncManager { current.withLock { $0!.0 } }
    var collection: MessageCollection { current.withLock { $0!.1 } }

    /// Opens (or, after ``close()``, reopens) alice's manager on the same cache, with a
    /// share of send answers lost, and her view of the room scrolled to its start.
    func open(paused: Bool) async throws {
        let coin = coin
        // A relaunched app makes its service anew from the saved session (token, device).
        let service = try MatrixChatService(
            homeserver: world.synapse.baseURL, userId: world.alice.userId, accessToken: world.alice.accessToken,
            deviceId: world.alice.deviceId, eventIdsPath: world.eventIdsPath)
        let lossy = InterceptingService(service) { request, base in
            let answer = try await base.sendMessage(request)
            if coin.toss() { throw ChatServiceError.transient(.network, "the answer was lost") }
            return answer
        }
        let manager = try await world.manager(lossy) {
            $0.sendRetryLimit = 20
            $0.sendRetryInterval = .milliseconds(500)
            $0.messageResendPolicy = .automatic
            $0.automaticMessageResendRetryCount = 50
        }
        // The view and its watcher exist before sync resumes, so that a failure of the
        // relaunch reconciliation (or of anything else) is seen, not only the failed list.
        let collection = try await manager.messageCollection(channelURL: world.room, limit: 50)
        let watcher = Task { [self] in
            for await event in collection.events {
                if case .failed(_, let messages, _) = event {
                    self.everFailed.withLock { $0.formUnion(messages.map(\.reqId)) }
                }
            }
        }
        current.withLock { $0 = (manager, collection, watcher) }
        try await collection.fetchPendingMessages()
        try await collection.fetchFailedMessages()
        if !paused { await manager.resumeSync() }
        while try await collection.fetchSucceededMessages(.previous) {}
    }

    /// Closes the manager as a killed app would leave it: whatever is in flight stays so.
    func close() async {
        guard let (manager, _, watcher) = current.withLock({ $0 }) else { return }
        await manager.close()
        // Closing ends the view's stream; the watcher reads what was still buffered (a
        // failure just before the close) instead of being cancelled past it.
        await watcher.value
    }
}

extension SynapseTests {
    @Test(arguments: matrixSoakSeeds)
    func aSeededScheduleAgainstSynapseKeepsEveryGuarantee(seed: UInt64) async throws {
        try await withWorld { world in
            let steps = SeededRandom(seed: seed)
            let client = SoakClient(world: world, coin: SeededRandom(seed: seed &+ 1, rate: 0.15))
            var paused = false
            try await client.open(paused: paused)
            var aliceTexts: [String] = []
            var aliceReqIds: [String: String] = [:]
            var bobMessages: [Message] = []
            var schedule: [String] = []
            for _ in 0..<25 {
                let step = SoakStep.pick(steps.next(below: 100))
                schedule.append("\(step)")
                switch step {
                case .aliceSends:
                    for _ in 0...steps.next(below: 3) {
                        let text = "a\(aliceTexts.count)"
                        aliceTexts.append(text)
                        aliceReqIds[text] = try await client.manager.sendMessage(.text(text), channelURL: world.room).reqId
                    }
                case .bobSends:
                    for _ in 0...steps.next(below: 3) {
                        let index = bobMessages.count
                        bobMessages.append(try await world.bobSends("b\(index)", reqId: "soak-\(seed)-b\(index)"))
                    }
                case .bobEdits:
                    guard !bobMessages.isEmpty else { continue }
                    let target = bobMessages[steps.next(below: bobMessages.count)]
                    _ = try? await world.bob.updateMessage(
                        channelURL: world.room, messageId: target.messageId, text: "\(target.text) edited \(schedule.count)",
                        operationId: UUID().uuidString)
                case .bobRedacts:
                    guard !bobMessages.isEmpty else { continue }
                    let target = bobMessages[steps.next(below: bobMessages.count)]
                    try? await world.bob.deleteMessage(channelURL: world.room, messageId: target.messageId, operationId: UUID().uuidString)
                case .togglePause:
                    paused.toggle()
                    if paused { await client.manager.pauseSync() } else { await client.manager.resumeSync() }
                case .relaunch:
                    await client.close()
                    try await client.open(paused: paused)
                case .killHomeserver:
                    world.synapse.kill()
                    try await world.synapse.restart()
                case .settle:
                    try await Task.sleep(for: .milliseconds(300))
                }
            }
            if paused { await client.manager.resumeSync() }
            try await waitFor("the connection") { await client.manager.connectionState == .online }
            // As an app scrolling up would: history a paused or offline open could not read.
            while try await client.collection.fetchSucceededMessages(.previous) {}
            let replay = "seed \(seed) (MATRIX_SOAK_SEED=\(seed)): \(schedule.joined(separator: " "))"

            // Everything settles: nothing unsent, and alice's view is the room.
            var server: [Message] = []
            try await waitFor("alice's view to equal the room; \(replay)") {
                let unsent = await client.collection.pendingMessages.count + client.collection.failedMessages.count
                guard unsent == 0 else { return false }
                server = try await world.roomMessages()
                let shown = await client.collection.succeededMessages
                return shown.map(\.messageId) == server.map(\.messageId) && shown.map(\.text) == server.map(\.text)
            }
            // Exactly once, and in lane order except where a failure let a resend pass.
            let texts = server.map(\.text)
            let sent = texts.filter { $0.hasPrefix("a") }
            var missing: [String] = []
            for text in aliceTexts where !sent.contains(text) {
                missing.append("\(text): \(String(describing: await client.manager.message(reqId: aliceReqIds[text] ?? "")))")
            }
            #expect(missing.isEmpty, "lost: \(missing.joined(separator: "; ")); \(replay)")
            #expect(sent.count == aliceTexts.count, "a message doubled: \(replay)")
            let failed = client.everFailed.withLock { $0 }
            let inOrder = server.filter { $0.text.hasPrefix("a") && !failed.contains($0.reqId) }.map(\.text)
            #expect(inOrder == aliceTexts.filter(inOrder.contains), "lane order: \(replay)")
            await client.close()
        }
    }
}
