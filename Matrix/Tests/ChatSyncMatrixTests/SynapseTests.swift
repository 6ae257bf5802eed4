import ChatSync
import Foundation
import Synchronization
import Testing

@testable import ChatSyncMatrix

/// ChatSync against a real Synapse on 127.0.0.1 (`scripts/synapse.sh install` first).
/// Real time is involved (a homeserver is), so each wait is for an outcome, bounded
/// generously; none asserts how long anything took.
@Suite("Synapse", .serialized)
struct SynapseTests {
    /// A homeserver with alice and bob in one room, and a directory for caches.
    struct World {
        let synapse: Synapse
        let alice: MatrixChatService
        let bob: MatrixChatService
        let room: String
        let directory: URL

        static func make() async throws -> World {
            let synapse = try await Synapse.start()
            try synapse.register("alice")
            try synapse.register("bob")
            let directory = synapse.directory.appendingPathComponent("clients")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let alice = try await synapse.login("alice", eventIdsPath: directory.appendingPathComponent("alice-ids.sqlite").path)
            let bob = try await synapse.login("bob", eventIdsPath: nil)
            let room = try await bob.createRoom(name: "General", joining: [alice])
            return World(synapse: synapse, alice: alice, bob: bob, room: room, directory: directory)
        }

        func manager(_ service: any ChatService, _ configure: (inout SyncManagerOptions) -> Void = { _ in }) async throws -> SyncManager {
            var options = SyncManagerOptions()
            options.sendRetryInterval = .milliseconds(50)
            configure(&options)
            return try await SyncManager(
                userId: "@alice:localhost", service: service, databasePath: directory.appendingPathComponent("alice.sqlite").path,
                options: options)
        }

        /// Every message of the room, oldest first, as bob's device reads it.
        func roomMessages() async throws -> [Message] {
            var all: [Message] = []
            var hasPrev = true
            var query = MessageQuery(channelURL: room, timestamp: .max, prevLimit: 200, nextLimit: 0)
            while hasPrev {
                let page = try await bob.fetchMessages(query)
                all = page.messages + all
                hasPrev = page.hasPrev && !page.messages.isEmpty
                if let oldest = page.messages.first {
                    query = MessageQuery(
                        channelURL: room, timestamp: oldest.createdAt, anchorMessageId: oldest.messageId, prevLimit: 200,
                        nextLimit: 0, inclusive: false)
                }
            }
            return all
        }
    }

    func withWorld(_ body: (World) async throws -> Void) async throws {
        let world = try await World.make()
        do {
            try await body(world)
        } catch {
            await world.synapse.cleanUp()
            throw error
        }
        await world.synapse.cleanUp()
    }

    /// Waits (polling, bounded by two minutes) until `condition` holds.
    func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting for \(what)")
    }

    @Test func aCollectionScrollsBackThroughFiveHundredMessagesExactlyOnce() async throws {
        try await withWorld { world in
            for index in 0..<500 {
                _ = try await world.bob.sendMessage(
                    SendMessageRequest(reqId: "bob-\(index)", channelURL: world.room, kind: .text, text: "m\(index)"))
            }
            let manager = try await world.manager(world.alice)
            await manager.resumeSync()
            let collection = try await manager.messageCollection(channelURL: world.room, limit: 50)
            var fetches = 0
            while try await collection.fetchSucceededMessages(.previous) {
                fetches += 1
                try #require(fetches < 100, "the collection keeps saying there is more")
            }
            let texts = await collection.succeededMessages.map(\.text)
            #expect(texts == (0..<500).map { "m\($0)" })
            await manager.close()
        }
    }

    @Test func twoHundredSendsWithLostAnswersLandExactlyOnceInLaneOrder() async throws {
        try await withWorld { world in
            let lossy = LossyService(world.alice, lossRate: 0.2, seed: 7)
            let manager = try await world.manager(lossy) { $0.sendRetryLimit = 20 }
            await manager.resumeSync()
            var reqIds: [String] = []
            for index in 0..<200 {
                reqIds.append(try await manager.sendMessage(.text("s\(index)"), channelURL: world.room).reqId)
            }
            try await waitFor("every send to sync") {
                var synced = 0
                for reqId in reqIds where await manager.message(reqId: reqId)?.syncState == .synced { synced += 1 }
                return synced == reqIds.count
            }
            #expect(lossy.lostAnswers > 0)
            let texts = try await world.roomMessages().map(\.text)
            #expect(texts == (0..<200).map { "s\($0)" })
            await manager.close()
        }
    }

    @Test func liveMessagesEnterAnOpenView() async throws {
        try await withWorld { world in
            let manager = try await world.manager(world.alice)
            await manager.resumeSync()
            let collection = try await manager.messageCollection(channelURL: world.room, limit: 20)
            _ = try await collection.fetchSucceededMessages(.previous)
            try await waitFor("the connection") { await manager.connectionState == .online }
            for index in 0..<3 {
                _ = try await world.bob.sendMessage(
                    SendMessageRequest(reqId: "live-\(index)", channelURL: world.room, kind: .text, text: "live \(index)"))
            }
            try await waitFor("three live messages") { await collection.succeededMessages.count == 3 }
            #expect(await collection.succeededMessages.map(\.text) == ["live 0", "live 1", "live 2"])
            await manager.close()
        }
    }
}

/// Forwards to a service and, for a share of sends, throws away the answer after the
/// real call: the message is stored, the client hears a network error.
final class LossyService: ChatService {
    let base: any ChatService
    let lossRate: Double
    private let state: Mutex<(random: UInt64, lost: Int)>

    init(_ base: any ChatService, lossRate: Double, seed: UInt64) {
        self.base = base
        self.lossRate = lossRate
        state = Mutex((seed, 0))
    }

    var lostAnswers: Int { state.withLock { $0.lost } }

    /// splitmix64: seeded, so a failure replays.
    private func lose() -> Bool {
        state.withLock { state in
            state.random &+= 0x9E37_79B9_7F4A_7C15
            var z = state.random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            let lost = Double((z ^ (z >> 31)) >> 11) / Double(1 << 53) < lossRate
            if lost { state.lost += 1 }
            return lost
        }
    }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        let answer = try await base.sendMessage(request)
        if lose() { throw ChatServiceError.transient(.network, "the answer was lost") }
        return answer
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage { try await base.fetchMessages(query) }
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
    }
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await base.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
    }
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        try await base.uploadFile(request, progress: progress)
    }
    func updateMessage(channelURL: String, messageId: Int64, text: String) async throws -> Message {
        try await base.updateMessage(channelURL: channelURL, messageId: messageId, text: text)
    }
    func deleteMessage(channelURL: String, messageId: Int64) async throws {
        try await base.deleteMessage(channelURL: channelURL, messageId: messageId)
    }
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage { try await base.fetchChannels(query) }
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await base.channelChangeLogs(token: token, limit: limit)
    }
    func events() async -> AsyncStream<ServiceEvent> { await base.events() }
}
