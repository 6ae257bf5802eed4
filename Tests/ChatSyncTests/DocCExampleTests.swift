import ChatSync
import ChatSyncTesting
import Testing

/// The example of the DocC article "Testing your app"
/// (Sources/ChatSyncTesting/ChatSyncTesting.docc/TestingYourApp.md), compiled and run,
/// so that the first test a newcomer copies works.
@Suite("DocC examples", .capturingLogs)
struct DocCExampleTests {
    @Test func aMessageFromBobShowsUp() async throws {
        let server = SimulatedChatServer(seed: 1)
        try await server.createChannel("general", members: ["alice", "bob"])
        var options = SyncManagerOptions()
        options.clock = InstantClock()  // retries and backoffs without real time passing
        let manager = try await SyncManager(
            userId: "alice", service: server.service(for: "alice"), databasePath: nil, options: options)
        await manager.resumeSync()
        let collection = try await manager.messageCollection(channelURL: "general")
        _ = try await collection.fetchSucceededMessages(.previous)

        try await server.post(.text("Hi Alice"), from: "bob", to: "general")
        // wait for the event, then check the list
        for await event in collection.events {
            if case .succeeded(.insert, let messages) = event, messages.contains(where: { $0.text == "Hi Alice" }) { break }
        }
        #expect(await collection.succeededMessages.map(\.text) == ["Hi Alice"])
        await manager.close()
    }
}
