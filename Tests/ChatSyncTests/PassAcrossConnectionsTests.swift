import ChatSyncTesting
import Testing

@testable import ChatSync

/// A reconnect pass whose connection broke under it stops there (Guarantees: Live updates
/// and reconnect). Before 16fc6ef it went on into the next connection and claimed that
/// connection's catch-up of the channel, so the next connection's own pass skipped it;
/// when that catch-up failed, its retry was asked for under the old connection and
/// dropped, and a view at the newest messages missed what was posted while alice was
/// away. A second reader found it by reading; this test walks the schedule.
@Suite("A reconnect pass across connections", .capturingLogs)
struct PassAcrossConnectionsTests {
    @Test func aPassOfALostConnectionLeavesTheNextConnectionsCatchUpAlone() async throws {
        let (harness, holder) = try await Harness.makeWrapped(history: 5, wrapper: PassHolder.init)
        let server = harness.server
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        await harness.online()
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.settle()
        #expect(await view.succeededMessages.count == 5)

        // Away; back with the pass's change-log request held; away and back again.
        await server.setOnline(false, for: "alice")
        await harness.settle()
        try await server.post(.text("while away 1"), from: "bob", to: Harness.channel)
        await holder.holdNextChangeLogs()
        await server.setOnline(true, for: "alice")
        try #require(await eventually { await holder.heldChangeLogCount == 1 }, "the first return's pass waits on its change logs")
        let engine = harness.manager.engine
        let first = await engine.epoch
        await server.setOnline(false, for: "alice")
        try #require(await eventually { await engine.epoch > first }, "the break is handled")
        try await server.post(.text("while away 2"), from: "bob", to: Harness.channel)
        await holder.holdNextChangeLogs()
        await holder.holdNextCatchUp()
        await server.setOnline(true, for: "alice")
        try #require(await eventually { await holder.heldChangeLogCount == 2 }, "the second return's pass waits on its change logs")

        // The first pass goes on: it must not take the second connection's catch-up.
        await holder.releaseOldestChangeLogs()
        let tookIt = await eventually(turns: 20_000) { await holder.isHoldingCatchUp }
        #expect(!tookIt, "the pass of a lost connection asked for the next connection's catch-up")
        // The second pass catches the channel up; its first try is lost and is retried.
        await holder.releaseOldestChangeLogs()
        // Required: a release with nothing held would be lost, and the test would go on untested.
        try #require(await eventually { await holder.isHoldingCatchUp }, "the second pass's catch-up is in flight")
        await holder.releaseCatchUp(failing: true)
        await harness.settle()
        let shown = await view.succeededMessages.map(\.text)
        #expect(shown.last == "while away 2", "the view caught up: \(shown)")
    }
}
