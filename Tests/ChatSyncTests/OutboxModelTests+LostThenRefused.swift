import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// Back online after a relaunch, with alice's message `reqId` stored by the service in
    /// the earlier run and its answer lost: every try of it in this run is refused (503)
    /// until its retries are spent, with no other fault, so that a look-up is answered.
    /// The refusals stored nothing, but the earlier run's try did: the message must not
    /// fail (nor, under `.none`, be dropped) while the service holds it. Before, the outbox
    /// forgot a lost answer of an earlier run once the message was tried again, failed it
    /// without asking, and it stood failed beside the copy the sync showed (a review's
    /// finding).
    static func refusedUntilSpent(
        _ harness: Harness, reqId: String, refusing: SendsRefused, failures: FailureLog,
        faulty: Bool, locked: Set<Int64>, context: String, log: inout [String]
    ) async throws {
        await applyFaults(harness.server, faulty: false, locked: locked)
        await refusing.refuse(reqId)
        // The lost answer may have failed it already (retries spent), and a resend brought it back.
        let failedBefore = failures.reqIds.contains(reqId)
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        await refusing.stop()
        let refusals = await refusing.refusals
        log.append("online, its tries refused \(refusals) times")
        // Lanes are FIFO: a message ahead of it that waits for a look-up may keep it unsent.
        if refusals > 0 {
            #expect(
                failedBefore || !failures.reqIds.contains(reqId), "\(reqId), which the service holds, failed after refusals: \(context)")
            #expect(
                try !harness.outbox().contains { $0.reqId == reqId },
                "\(reqId), which the service holds, is still in the outbox after refusals: \(context)")
        }
        await applyFaults(harness.server, faulty: faulty, locked: locked)
        await harness.settle()
    }
}
