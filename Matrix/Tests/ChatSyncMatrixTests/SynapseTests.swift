import ChatSync
import Foundation
import SynapseHarness
import Testing

/// ChatSync against a real Synapse on 127.0.0.1 (`scripts/synapse.sh install` first).
/// One homeserver per test, one test at a time (the extensions in the other files are
/// part of this serialized suite).
@Suite("Synapse", .serialized)
struct SynapseTests {
    @Test func aCollectionScrollsBackThroughFiveHundredMessagesExactlyOnce() async throws {
        try await withWorld { world in
            for index in 0..<500 { try await world.bobSends("m\(index)", reqId: "bob-\(index)") }
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
            let coin = SeededRandom(seed: 7, rate: 0.2)
            let lossy = InterceptingService(world.alice) { request, base in
                let answer = try await base.sendMessage(request)
                if coin.toss() { throw ChatServiceError.transient(.network, "the answer was lost") }
                return answer
            }
            let manager = try await world.manager(lossy) { $0.sendRetryLimit = 20 }
            await manager.resumeSync()
            var reqIds: [String] = []
            for index in 0..<200 {
                reqIds.append(try await manager.sendMessage(.text("s\(index)"), channelURL: world.room).reqId)
            }
            try await waitUntilSynced(reqIds, by: manager)
            #expect(coin.heads > 0)
            let texts = try await world.roomMessages().map(\.text)
            #expect(texts == (0..<200).map { "s\($0)" })
            await manager.close()
        }
    }

    @Test func liveMessagesEnterAnOpenView() async throws {
        try await withWorld { world in
            let (manager, collection) = try await aliceWithLiveView(in: world)
            for index in 0..<3 { try await world.bobSends("live \(index)", reqId: "live-\(index)") }
            try await waitFor("three live messages") { await collection.succeededMessages.count == 3 }
            #expect(await collection.succeededMessages.map(\.text) == ["live 0", "live 1", "live 2"])
            await manager.close()
        }
    }
}
