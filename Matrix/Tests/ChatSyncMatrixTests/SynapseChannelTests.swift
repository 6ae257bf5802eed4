import ChatSync
import Foundation
import SynapseHarness
import Testing

/// Rooms as a channel list.
extension SynapseTests {
    @Test func theChannelListFollowsANewMessage() async throws {
        try await withWorld { world in
            var rooms: [String] = []
            for name in ["Alpha", "Beta", "Gamma"] {
                let room = try await world.synapse.createRoom(name: name, by: world.bob, joining: [world.alice])
                try await world.bobSends("hello \(name)", reqId: "hello-\(name)", in: room)
                rooms.append(room)
            }
            let manager = try await world.manager(world.alice)
            await manager.resumeSync()
            try await waitFor("the connection") { await manager.connectionState == .online }
            // The General room has no message: not in a list that leaves out empty channels.
            let list = try await manager.channelCollection(query: ChannelListQuery(includeEmpty: false, limit: 2))
            while try await list.fetch() {}
            #expect(await list.channels.map(\.name) == ["Gamma", "Beta", "Alpha"])
            #expect(await list.channels.first?.lastMessage?.text == "hello Gamma")

            try await world.bobSends("news", reqId: "news", in: rooms[0])
            try await waitFor("Alpha at the top") { await list.channels.map(\.name) == ["Alpha", "Gamma", "Beta"] }
            #expect(await list.channels.first?.lastMessage?.text == "news")
            await manager.close()
        }
    }
}
