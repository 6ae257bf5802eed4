import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// The failed list's count limit and a resend in flight (Guarantees: Failure, retries and
/// resend policy). The outbox model and the soak find this with a small limit in half
/// their schedules; this pins the one schedule.
@Suite("Failed list limits", .capturingLogs)
struct FailedListLimitTests {
    @Test func aResendInFlightIsNeitherCountedNorDroppedWhenAnotherMessageFails() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let attachment = try makeAttachment(in: dir)
        let (harness, sends) = try await Harness.makeWrapped(
            configure: {
                $0.maxFailedMessageCountPerChannel = 1
                $0.messageResendPolicy = .manual
                $0.sendRetryLimit = 0
            }, wrapper: { HeldSends(base: $0) })
        let (collection, recorder) = try await harness.collectionAtTheNewestMessages()
        let failures = AsyncStream.makeStream(of: String.self)
        await harness.manager.engine.setFailureWitness { failures.continuation.yield($0) }
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["a", "b"]))
        let photo = try await harness.manager.sendMessage(
            .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: "a"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await collection.failedMessages.map(\.reqId) == [photo.reqId])

        // The photo is resent and its send waits; a text fails beside it.
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["b"]))
        await sends.holdNextSend(of: .media)
        _ = try await harness.manager.resendMessage(reqId: photo.reqId)
        await sends.untilHolding()
        let text = try await harness.manager.sendMessage(.text("b"), channelURL: Harness.channel)
        var iterator = failures.stream.makeAsyncIterator()
        while let failed = await iterator.next(), failed != text.reqId {}
        // Both are listed: the resend in flight does not count, and the text stays.
        #expect(Set(await collection.failedMessages.map(\.reqId)) == [photo.reqId, text.reqId])

        await sends.release()
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [photo.reqId])
        #expect(await collection.failedMessages.map(\.reqId) == [text.reqId])
        #expect(await collection.succeededMessages.map(\.reqId) == [photo.reqId])
        #expect(!recorder.events.contains { if case .failed(_, _, .removeExceededMaxCount) = $0 { true } else { false } })

        // A further failure beyond the limit still removes the oldest failed message.
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["b", "c"]))
        let other = try await harness.manager.sendMessage(.text("c"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await collection.failedMessages.map(\.reqId) == [other.reqId])
        #expect(
            recorder.events.contains {
                if case .failed(.remove, let m, .removeExceededMaxCount) = $0 { m.map(\.reqId) == [text.reqId] } else { false }
            })
        await checkInvariants(collection, recorder)
        await harness.manager.close()
    }
}
