import ChatSync
import ChatSyncMatrix
import Foundation
import SynapseHarness

/// The demo's story, step by step.
enum MatrixDemo {
    static func run() async throws {
        print("Starting Synapse on 127.0.0.1 …")
        let synapse = try await Synapse.start()
        do {
            try await tell(synapse)
        } catch {
            await synapse.cleanUp()
            throw error
        }
        await synapse.cleanUp()
    }

    private static func tell(_ synapse: Synapse) async throws {
        print("Synapse answers at \(synapse.baseURL). Registering alice and bob.")
        try synapse.register("alice")
        try synapse.register("bob")
        let cache = synapse.directory.appendingPathComponent("alice")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let alice = try await synapse.login("alice", eventIdsPath: cache.appendingPathComponent("event-ids.sqlite").path)
        let bob = try await synapse.login("bob")
        let room = try await synapse.createRoom(name: "General", by: bob, joining: [alice])
        print("bob made the room General (\(room)) and posts 120 messages.")
        var bobs: [Message] = []
        for index in 1...120 {
            bobs.append(
                try await bob.sendMessage(SendMessageRequest(reqId: "bob-\(index)", channelURL: room, kind: .text, text: "bob #\(index)")))
        }

        var options = SyncManagerOptions()
        options.sendRetryInterval = .milliseconds(500)
        options.sendRetryLimit = 20
        options.messageResendPolicy = .automatic
        let manager = try await SyncManager(
            userId: alice.userId, service: alice, databasePath: cache.appendingPathComponent("cache.sqlite").path, options: options)
        await manager.resumeSync()
        let view = try await manager.messageCollection(channelURL: room, limit: 40)
        print("\n1. alice opens General and scrolls back to its start, 40 at a time:")
        var pages = 0
        while try await view.fetchSucceededMessages(.previous) { pages += 1 }
        let shown = await view.succeededMessages
        print("   \(pages + 1) pages, \(shown.count) messages, from \"\(shown.first?.text ?? "")\" to \"\(shown.last?.text ?? "")\"")
        try await until("online") { await manager.connectionState == .online }

        print("\n2. The homeserver is killed (SIGKILL). alice writes two messages anyway:")
        synapse.kill()
        let outage = [
            try await manager.sendMessage(.text("written while the server was down"), channelURL: room),
            try await manager.sendMessage(.text("and a second one"), channelURL: room),
        ]
        for message in outage { print("   \"\(message.text)\": \(message.syncState.rawValue), shown at once") }
        print("   Synapse starts again on the same database …")
        try await synapse.restart()
        try await until("both messages to sync") {
            for message in outage where await manager.message(reqId: message.reqId)?.syncState != .synced { return false }
            return true
        }
        let onServer = try await bob.fetchMessages(MessageQuery(channelURL: room, timestamp: .max, prevLimit: 10, nextLimit: 0))
        for message in outage {
            let copies = onServer.messages.filter { $0.text == message.text }.count
            print("   \"\(message.text)\": synced; \(copies) copy on the homeserver")
            guard copies == 1 else { throw DemoFailure("\(copies) copies of \"\(message.text)\" on the homeserver") }
        }

        print("\n3. bob edits his first message and redacts his second; alice's view follows live:")
        _ = try await bob.updateMessage(
            channelURL: room, messageId: bobs[0].messageId, text: "bob #1 (edited)", operationId: UUID().uuidString)
        try await bob.deleteMessage(channelURL: room, messageId: bobs[1].messageId, operationId: UUID().uuidString)
        try await until("the edit and the redaction") {
            let texts = await view.succeededMessages.map(\.text)
            return texts.first == "bob #1 (edited)" && !texts.contains("bob #2")
        }
        let texts = await view.succeededMessages.map(\.text)
        print("   the view starts: \(texts.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ")) (\(texts.count) messages)")

        print("\n4. alice's channel list, newest message first:")
        _ = try await synapse.createRoom(name: "Random", by: bob, joining: [alice])
        let list = try await manager.channelCollection()
        while try await list.fetch() {}
        for channel in await list.channels {
            print("   \(channel.name.isEmpty ? channel.channelURL : channel.name): \(channel.lastMessage?.text ?? "(no messages)")")
        }
        await manager.close()
    }

    /// Waits until `condition` holds (a real homeserver answers in its own time; two minutes at most).
    private static func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw SynapseError.timedOut(what)
    }
}

/// The demo's story went wrong: the message says how.
struct DemoFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
