import ChatSyncTesting
import Clocks
import Testing

@testable import ChatSync

/// A sync after reconnecting that the service does not answer is tried again with
/// backoff (found by the simulation soak, seed 2416: a deletion made while offline
/// stayed in the view because the change-log request after reconnecting was lost).
@Suite("Sync retries", .capturingLogs)
struct SyncRetryTests {
    /// A view of "general" holding the 5 messages of its history, online.
    private func followingView(_ clock: TestClock<Duration>) async throws -> (Harness, MessageCollection, EventRecorder) {
        let harness = try await Harness.make(history: 5) { $0.clock = clock }
        let collection = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        await harness.online()
        _ = try await collection.fetchSucceededMessages(.previous)
        await harness.settle()
        #expect(await collection.succeededMessages.count == 5)
        return (harness, collection, recorder)
    }

    @Test func aLostReconnectSyncIsRetriedAfterABackoff() async throws {
        let clock = TestClock()
        let (harness, collection, recorder) = try await followingView(clock)
        let server = harness.server
        await server.setOnline(false, for: "alice")
        await harness.settle()
        let victim = await server.messages(in: Harness.channel)[2]
        try await server.delete(messageId: victim.messageId, channelURL: Harness.channel)
        try await server.post(.text("while away"), from: "bob", to: Harness.channel)
        await server.setFaults(FaultPlan(loseResponseRate: 1))
        await server.setOnline(true, for: "alice")

        #expect(await sleeperRegistered(on: clock), "a retry is scheduled")
        #expect(await collection.succeededMessages.contains { $0.messageId == victim.messageId }, "the deletion is not known yet")
        await server.setFaults(FaultPlan())
        await clock.advance(by: .milliseconds(999))
        #expect(await collection.succeededMessages.contains { $0.messageId == victim.messageId }, "not before 1 s")
        await clock.advance(by: .milliseconds(1))
        await harness.settle()
        let succeeded = await checkInvariants(collection, recorder)
        #expect(succeeded.map(\.messageId) == (await server.messages(in: Harness.channel)).map(\.messageId))
        #expect(succeeded.last?.text == "while away", "the view caught up and follows the live edge again")
    }

    @Test func retriesAreBoundedAndAFetchStartsOver() async throws {
        let clock = TestClock()
        let (harness, collection, _) = try await followingView(clock)
        let server = harness.server
        await server.setOnline(false, for: "alice")
        await harness.settle()
        try await server.post(.text("while away"), from: "bob", to: Harness.channel)
        await server.setFaults(FaultPlan(failRequestRate: 1))
        await server.setOnline(true, for: "alice")
        let delays = [1, 2, 4, 8, 16, 30, 30, 30]
        #expect(delays.count == SyncEngine.syncRetryLimit)
        for (attempt, delay) in delays.enumerated() {
            #expect(await sleeperRegistered(on: clock), "retry \(attempt + 1) is scheduled")
            let before = await server.requestCount
            await clock.advance(by: .seconds(delay) - .milliseconds(1))
            #expect(await server.requestCount == before, "retry \(attempt + 1) waits \(delay) s")
            await clock.advance(by: .milliseconds(1))
            #expect(await eventually { await server.requestCount > before })
        }
        #expect(await eventually { await harness.manager.engine.backgroundTaskCount == 0 }, "then it waits for the app or the network")
        let requests = await server.requestCount
        await clock.advance(by: .seconds(600))
        #expect(await server.requestCount == requests)

        await server.setFaults(FaultPlan())
        _ = try await collection.fetchSucceededMessages(.next)
        await harness.settle()
        #expect(await collection.succeededMessages.last?.text == "while away")
    }
}
