import ChatSync
import ChatSyncTesting
import Foundation
import Testing

/// The README's code, compiled and run. `scripts/check-readme.py` checks that every
/// block between the markers below appears in README.md word for word.
@Suite("README examples", .capturingLogs)
struct ReadmeExampleTests {
    @Test func tour() async throws {
        let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: cacheDirectory) }

        // README-BEGIN tour
        // A backend. In an app this is your own `ChatService`; in tests, the simulator.
        let server = SimulatedChatServer(seed: 1)
        try await server.createChannel("general", members: ["alice", "bob"], name: "General")
        try await server.post(.text("Welcome!"), from: "bob", to: "general")

        // One manager per signed-in user. Opening touches no network.
        var options = SyncManagerOptions()
        options.messageResendPolicy = .automatic
        let manager = try await SyncManager(
            userId: "alice", service: server.service(for: "alice"),
            databasePath: cacheDirectory + "/alice.sqlite", options: options)

        // Start background sync, the outbox and real-time events.
        await manager.resumeSync()
        // README-END

        // README-BEGIN collection
        // A live view of the newest messages of a channel.
        let collection = try await manager.messageCollection(channelURL: "general", limit: 30)
        let screen = Task {
            for await event in collection.events {
                switch event {
                case .succeeded(.insert, let messages): print("show", messages.map(\.text))
                case .succeeded(.remove, let messages): print("hide", messages.map(\.messageId))
                case .newMessage(let message): print("new from", message.senderId)
                case .hugeGapDetected: try? await collection.resetViewpointTimestamp(.max)
                default: break
                }
            }
        }

        // The first page: from the cache at once, the rest synced in the background.
        var hasMore = try await collection.fetchSucceededMessages(.previous)
        // Scrolled to the top? Ask for older messages.
        if hasMore { hasMore = try await collection.fetchSucceededMessages(.previous) }

        // Done with the screen.
        await collection.remove()
        await screen.value
        // README-END
        #expect(!hasMore)

        // README-BEGIN sending
        // Stored in the outbox before this returns, shown as pending at once.
        let draft = try await manager.sendMessage(.text("On my way!"), channelURL: "general")

        // Follow one message: .created, then .syncing, then .synced (or .failed).
        for await state in manager.observeMessage(reqId: draft.reqId) {
            print(state.syncState)
        }

        // Failed messages stay in the failed list (policy .manual) until the app decides.
        for failed in try await manager.messageCollection(channelURL: "general").failedMessages {
            _ = try await manager.resendMessage(reqId: failed.reqId)
        }
        // README-END
        #expect(await manager.message(reqId: draft.reqId)?.syncState == .synced)
        let sent = try #require(await manager.message(reqId: draft.reqId))

        // README-BEGIN edits
        // Offline or not: shown at once, sent when the network allows.
        let shown = try await manager.updateMessage(messageId: sent.messageId, channelURL: "general", text: "On my way, 5 min")
        print(shown.isEditPending)  // true until the service confirms it
        try await manager.deleteMessage(messageId: sent.messageId, channelURL: "general")
        // README-END
        #expect(shown.text == "On my way, 5 min")

        // README-BEGIN channels
        // The channel list: cached pages first, kept live.
        let list = try await manager.channelCollection(query: ChannelListQuery(order: .latestLastMessage, limit: 20))
        let listScreen = Task {
            for await case .channels(let action, let channels) in list.events {
                print(action, channels.map(\.name))  // insert, update, move, remove, clear
            }
        }
        while try await list.fetch() {}  // or one page per scroll to the end
        let names = await list.channels.map(\.name)
        await list.remove()
        await listScreen.value
        // README-END
        #expect(names == ["General"])

        // README-BEGIN lifecycle
        // On sign-out.
        try await manager.clearCache()  // keeps unsent messages
        await manager.close()  // every later call throws .closed
        // README-END
    }

    @Test func boundedCache() async throws {
        let service = SimulatedChatServer().service(for: "alice")
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let path = dir.path("cache.sqlite")
        // README-BEGIN capacity
        var options = SyncManagerOptions()
        options.messageStoreCapacity = 100_000  // about 100,000 cached messages, all channels together
        let manager = try await SyncManager(userId: "alice", service: service, databasePath: path, options: options)
        // README-END
        #expect(manager.options.messageStoreCapacity == 100_000)
        await manager.close()
    }

    @MainActor
    @Test func observableModels() async throws {
        let server = SimulatedChatServer(seed: 2)
        try await server.createChannel("general", members: ["alice", "bob"], name: "General")
        for index in 0..<60 { try await server.post(.text("m\(index)"), from: "bob", to: "general") }
        let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"), databasePath: nil)
        await manager.resumeSync()
        // README-BEGIN observable
        // On the main actor: models that SwiftUI (or any Observation user) watches.
        let chat = MessageCollectionModel(collection: try await manager.messageCollection(channelURL: "general"))
        await chat.loadOutbox()  // unsent and failed messages from before
        await chat.loadOlder()  // the newest page; returns once `succeededMessages` shows it
        print(chat.succeededMessages.count, chat.hasOlder, chat.isLoadingOlder, chat.lastError as Any)

        let inbox = ChannelCollectionModel(collection: try await manager.channelCollection())
        await inbox.loadNextPage()
        print(inbox.channels.map(\.name), inbox.hasMore)
        // README-END
        // Background sync runs meanwhile, so how much the first load shows may vary; that
        // it shows exactly the collection's list, ending at the newest message, does not.
        #expect(chat.succeededMessages == (await chat.collection.succeededMessages))
        #expect(chat.succeededMessages.last?.text == "m59" && chat.succeededMessages.count >= 50)
        #expect(!chat.isLoadingOlder && chat.lastError == nil)
        #expect(inbox.channels.map(\.name) == ["General"] && !inbox.hasMore)
        await manager.close()
    }
}
