import ChatSyncTesting

@testable import ChatSync

/// Holds the next request for newer messages (a catch-up: a page after a place, none
/// before it) in flight until released, then passes it on; every other call goes through.
/// A test or generator arms it, acts while that request waits (the connection breaks and
/// comes back, say), then releases it.
actor CatchUpHolder: ForwardingChatService {
    let base: any ChatService
    private var hold = OneShotHold()

    init(base: any ChatService) { self.base = base }

    /// Holds the next catch-up that arrives.
    func holdNextCatchUp() { hold.arm() }
    /// A catch-up waits.
    var isHolding: Bool { hold.isHolding }
    /// Answers the held catch-up, if any, and disarms: a later catch-up goes through.
    func release() { hold.release() }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if query.timestamp != .max, query.prevLimit == 0, hold.takesThisCall() {
            await withCheckedContinuation { hold.keep($0) }
        }
        return try await base.fetchMessages(query)
    }
}

/// What ``Harness/returnWithCatchUpHeld(_:turns:onEachChange:whileAwayAgain:)`` saw: whether
/// each of its waits ended as it should (with `turns`, a wait counts scheduler turns, so
/// a machine far too slow may give one up).
struct HeldCatchUpRun {
    /// A catch-up was held (none is asked for when no view follows the newest messages).
    var held = false
    var broke = false
    var back = false
    /// The second return's sync ended while the held request still waited.
    var synced = false
    var complete: Bool { held && broke && back && synced }
}

extension Harness {
    /// With alice away, her connection comes back with the reconnect's catch-up held in
    /// flight (a request on the old socket that hangs), breaks (`whileAwayAgain` runs while
    /// she is away) and comes back again. Once the second return's sync has ended, so that
    /// only the held request's task still runs, the held request is answered: the old
    /// catch-up cannot end first and hide a sync the second return skipped.
    /// `onEachChange` runs just before each change of the connection, with the new state.
    /// A generator that goes on either way passes `turns`, so a wait that cannot end costs
    /// a bounded number of scheduler turns, not the hang limit; a test that requires the
    /// whole run leaves it `nil`, so that its waits never hinge on the machine's speed.
    func returnWithCatchUpHeld(
        _ holder: CatchUpHolder, turns: Int? = nil, onEachChange: (_ online: Bool) async -> Void = { _ in },
        whileAwayAgain: () async throws -> Void
    ) async throws -> HeldCatchUpRun {
        let engine = manager.engine
        func eventually(_ condition: () async -> Bool) async -> Bool {
            if let turns { return await ChatSyncTests.eventually(turns: turns, condition) }
            return await ChatSyncTests.eventually(condition)
        }
        var run = HeldCatchUpRun()
        await holder.holdNextCatchUp()
        await onEachChange(true)
        await server.setOnline(true, for: "alice")
        _ = await eventually {
            if await holder.isHolding { return true }
            return await Harness.isSettled(engine, server: server)
        }
        run.held = await holder.isHolding
        guard run.held else {
            await holder.release()
            return run
        }
        do {
            let epoch = await engine.epoch
            await onEachChange(false)
            await server.setOnline(false, for: "alice")
            run.broke = await eventually { await engine.epoch > epoch }
            try await whileAwayAgain()
            await onEachChange(true)
            await server.setOnline(true, for: "alice")
            run.back = await eventually { await engine.isOnline }
            run.synced = await eventually { await engine.backgroundTaskCount == 1 }
        } catch {
            await holder.release()
            throw error
        }
        await holder.release()
        return run
    }
}
