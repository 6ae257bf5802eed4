import ChatSync
import ChatSyncMatrix
import Foundation
import SynapseHarness
import Testing

/// A homeserver with alice and bob in one room, and a directory for alice's caches.
struct World {
    let synapse: Synapse
    let alice: MatrixChatService
    let bob: MatrixChatService
    let room: String
    let directory: URL
    var eventIdsPath: String { directory.appendingPathComponent("alice-ids.sqlite").path }

    static func make() async throws -> World {
        let synapse = try await Synapse.start()
        do {
            try synapse.register("alice")
            try synapse.register("bob")
            let directory = synapse.directory.appendingPathComponent("clients")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let alice = try await synapse.login("alice", eventIdsPath: directory.appendingPathComponent("alice-ids.sqlite").path)
            let bob = try await synapse.login("bob", eventIdsPath: nil)
            let room = try await synapse.createRoom(name: "General", by: bob, joining: [alice])
            return World(synapse: synapse, alice: alice, bob: bob, room: room, directory: directory)
        } catch {
            await synapse.cleanUp()
            throw error
        }
    }

    /// Alice's manager on `service`, always on the same cache file (a second one is a relaunch).
    func manager(
        _ service: any ChatService, _ configure: (inout SyncManagerOptions) -> Void = { _ in }
    ) async throws
        -> SyncManager
    {
        var options = SyncManagerOptions()
        options.sendRetryInterval = .milliseconds(50)
        configure(&options)
        return try await SyncManager(
            userId: alice.userId, service: service, databasePath: directory.appendingPathComponent("alice.sqlite").path,
            options: options)
    }

    /// Bob sends a text, trying again with the same transaction id until the homeserver answers.
    @discardableResult
    func bobSends(_ text: String, reqId: String, in room: String? = nil) async throws -> Message {
        let request = SendMessageRequest(reqId: reqId, channelURL: room ?? self.room, kind: .text, text: text)
        for _ in 0..<600 {
            do {
                return try await bob.sendMessage(request)
            } catch let error as ChatServiceError where error.isTransient {
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        throw SynapseError.timedOut("bob's send of \(text)")
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

extension SynapseTests {
    /// Runs `body` in a new world and removes the world afterwards, failing or not.
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

    /// Waits (polling, bounded by three minutes) until `condition` holds. A real
    /// homeserver is involved, so waits are for outcomes; none asserts a duration.
    func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(180)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("timed out waiting for \(what)")
        throw SynapseError.timedOut(what)
    }

    /// Alice's manager, resumed and online, with a view of the room that fetched its
    /// newest page (so it follows live messages).
    func aliceWithLiveView(in world: World) async throws -> (SyncManager, MessageCollection) {
        let manager = try await world.manager(world.alice)
        await manager.resumeSync()
        let collection = try await manager.messageCollection(channelURL: world.room, limit: 20)
        _ = try await collection.fetchSucceededMessages(.previous)
        try await waitFor("the connection") { await manager.connectionState == .online }
        return (manager, collection)
    }

    /// Waits until every message of `reqIds` is synced.
    func waitUntilSynced(_ reqIds: [String], by manager: SyncManager) async throws {
        try await waitFor("\(reqIds.count) sends to sync") {
            for reqId in reqIds where await manager.message(reqId: reqId)?.syncState != .synced { return false }
            return true
        }
    }
}
