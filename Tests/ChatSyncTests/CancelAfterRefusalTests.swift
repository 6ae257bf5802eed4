import ChatSyncTesting
import Clocks
import Testing

@testable import ChatSync

/// A `.created` message may be cancelled (API §4.6) unless the service may already hold it.
/// A send the service refused (a 503, a 429, a permanent error) stored nothing, so it
/// leaves the message as cancellable as before; one whose answer may be lost does not.
@Suite("A cancel after a refusal", .capturingLogs)
struct CancelAfterRefusalTests {
    private func harness(clock: TestClock<Duration>) async throws -> (Harness, ScriptedSendOutcomes) {
        let (harness, sends) = try await Harness.makeWrapped(
            configure: {
                $0.clock = clock
                $0.sendRetryLimit = 3
                $0.sendRetryInterval = .seconds(5)
            }, wrapper: { ScriptedSendOutcomes(base: $0, clock: clock) })
        await harness.online()
        return (harness, sends)
    }

    /// Refused for now (503): the message waits for its retry, `.created`, and the app
    /// cancels it. It used to be refused for good, as if the service might hold it.
    @Test func aMessageWaitingForItsRetryAfterA503CanBeCancelled() async throws {
        let clock = TestClock()
        let (harness, sends) = try await harness(clock: clock)
        await sends.setNext(.unavailable)
        let reqId = try await harness.manager.sendMessage(.text("m"), channelURL: Harness.channel).reqId
        #expect(await eventually { await sends.log.count == 1 }, "the first try was refused")
        #expect(await eventually { (try? harness.outbox().first?.message.syncState) == .created }, "it waits for its retry")
        try await harness.manager.cancelMessage(reqId: reqId)
        #expect(try harness.outbox().isEmpty)
        await clock.advance(by: .seconds(10))
        await harness.settle()
        #expect(await sends.log.count == 1, "nothing more is sent")
        #expect(await harness.server.messages(in: Harness.channel).allSatisfy { $0.reqId != reqId })
        await harness.manager.close()
    }

    /// A timeout may follow a stored message: waiting for its retry, it cannot be cancelled.
    /// Its echo is held, or it would resolve the message first.
    @Test func aMessageWhoseAnswerMayBeLostCannotBeCancelled() async throws {
        let clock = TestClock()
        let (harness, sends) = try await harness(clock: clock)
        await harness.server.holdEvents(for: "alice")
        await harness.server.setFaults(FaultPlan(loseResponseRate: 1))
        await sends.setNext(.stored)
        let reqId = try await harness.manager.sendMessage(.text("m"), channelURL: Harness.channel).reqId
        #expect(await eventually { await sends.log.count == 1 })
        #expect(await eventually { (try? harness.outbox().first?.message.syncState) == .created }, "it waits for its retry")
        do {
            try await harness.manager.cancelMessage(reqId: reqId)
            Issue.record("the service holds it, yet the cancel was taken")
        } catch let error as SyncManagerError {
            #expect(error.code == .invalidParameter && error.message.contains(SyncEngine.mayAlreadyHoldIt), "\(error)")
        }
        await harness.server.setFaults(FaultPlan())
        await harness.server.releaseEvents(for: "alice")
        await clock.advance(by: .seconds(10))
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).filter { $0.reqId == reqId }.count == 1, "sent once")
        #expect(try harness.outbox().isEmpty)
        await harness.manager.close()
    }
}
