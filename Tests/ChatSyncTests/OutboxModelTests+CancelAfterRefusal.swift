import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// What ``cancelAfterRefusal(_:step:context:log:)`` sent, and whether its cancel removed it.
    struct RefusedThenCancelled {
        let reqId: String
        let text: String
        let cancelled: Bool
    }

    /// Online, alice sends a text the service refuses for good (a refusal it heard: nothing
    /// stored); the connection drops; she resends the failed message, which waits offline
    /// (`.created`), and cancels it. A `.created` message may be cancelled (API §4.6) unless
    /// the service may hold it, which it cannot here: an attempt used to leave it marked as
    /// possibly stored until it failed again, so that the cancel was refused (a review's
    /// finding).
    static func cancelAfterRefusal(
        _ harness: Harness, step: Int, context: String, log: inout [String]
    ) async throws -> RefusedThenCancelled {
        await harness.settle()
        let text = "bad \(step)"
        let reqId = try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel).reqId
        await harness.settle()
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        log.append("send bad, offline")
        guard try harness.outbox().contains(where: { $0.reqId == reqId && $0.message.syncState == .failed }) else {
            return RefusedThenCancelled(reqId: reqId, text: text, cancelled: false)
        }
        _ = try await harness.manager.resendMessage(reqId: reqId)
        do {
            try await harness.manager.cancelMessage(reqId: reqId)
            log.append("resend it offline and cancel")
            return RefusedThenCancelled(reqId: reqId, text: text, cancelled: true)
        } catch let error as SyncManagerError {
            #expect(error.code == .invalidParameter, "\(context)")
            log.append("resend it offline; cancel refused")
            await checkRefusalMayBeStored(error, reqId, harness.server, context: context)
            return RefusedThenCancelled(reqId: reqId, text: text, cancelled: false)
        }
    }
}
