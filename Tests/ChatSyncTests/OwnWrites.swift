import ChatSyncTesting
import Testing

@testable import ChatSync

/// The edits, deletions and corrections a model-based schedule makes, and what they
/// promise (Guarantees: Edits and deletions): shown at once, in every connection state;
/// after settling online, the server holds what the user last wrote and none of what
/// the user deleted, unless the operation was reported failed.
struct OwnWrites {
    private struct Ref: Hashable {
        let channelURL: String
        let messageId: Int64
    }

    private var lastText: [Ref: String] = [:]
    private var deleted: Set<Ref> = []
    private var failed: Set<Ref> = []
    private var corrected: [String: String] = [:]
    /// The awkward tails of edits and corrections, drawn apart from the schedule's writes.
    private var tails: SeededGenerator

    /// Whether a correction first tries an empty text, drawn apart from the schedule.
    private var empties: SeededGenerator

    init(seed: UInt64 = 0) {
        // Not seed + 80,000: the Outbox model draws its echoes from that stream, and the
        // two would then move in lockstep (the same draws deciding an echo's reqId and an
        // edit's tail), leaving some pairings of the two never tried.
        tails = SeededGenerator(seed: seed &+ 180_000)
        empties = SeededGenerator(seed: seed &+ 120_000)
    }

    /// Alice edits or deletes one of her messages on the server, or corrects one waiting
    /// in her outbox.
    mutating func makeOne(
        step: Int, harness: Harness, random: inout SeededGenerator, log: inout [String], withdrawn: inout Set<String>
    ) async throws {
        let manager = harness.manager
        let mine = await harness.server.messages(in: Harness.channel).filter { $0.senderId == "alice" }
        switch Int.random(in: 0..<3, using: &random) {
        case 0, 1:
            guard let target = mine.randomElement(using: &random) else { return }
            let ref = Ref(channelURL: target.channelURL, messageId: target.messageId)
            // Read before the call: an echo handled between a refusal and a later read
            // would cache the message and fail the check below for nothing.
            let cachedBefore = try manager.engine.store.message(channelURL: Harness.channel, messageId: target.messageId) != nil
            do {
                if Int.random(in: 0..<3, using: &random) < 2 {
                    log.append("alice edits \(target.messageId)")
                    let text = "e\(step)" + AwkwardText.tail(using: &tails)
                    let shown = try await manager.updateMessage(messageId: target.messageId, channelURL: Harness.channel, text: text)
                    #expect(shown.text == text && shown.isEditPending, "an edit is shown at once")
                    lastText[ref] = text
                } else {
                    log.append("alice deletes \(target.messageId)")
                    try await manager.deleteMessage(messageId: target.messageId, channelURL: Harness.channel)
                    deleted.insert(ref)
                    withdrawn.insert(target.reqId)
                }
            } catch let error as SyncManagerError where error.code == .invalidParameter {
                #expect(!cachedBefore || deleted.contains(ref), "refused only when not cached or being deleted: \(error)")
                log.append("  refused")
            }
        default:
            let waiting = try harness.outbox().filter {
                $0.origin == .outbox && !$0.message.syncState.isPending && !$0.message.text.hasPrefix("bad")
            }
            let created = try harness.outbox().filter { $0.message.syncState == .created && !$0.message.text.hasPrefix("bad") }
            guard let target = (waiting + created).randomElement(using: &random) else { return }
            log.append("alice corrects \(target.message.syncState)")
            if Int.random(in: 0..<4, using: &empties) == 0 {
                // Empty text is refused whatever the kind (API §4.6), and changes nothing:
                // a caption or custom text the library emptied would follow as an edit it
                // refuses itself once an earlier attempt turned out stored.
                let empty = ["", " ", "\n\t"].randomElement(using: &empties)!
                let refused = await errorCode { _ = try await manager.updatePendingMessage(reqId: target.reqId, text: empty) }
                #expect(refused == .invalidParameter, "an empty correction of a \(target.message.kind) message is refused")
                let after = try harness.outbox().first { $0.reqId == target.reqId }
                #expect(after.map { $0.message.text == target.message.text } ?? true, "a refused correction changes nothing")
            }
            let text = "c\(step)" + AwkwardText.tail(using: &tails)
            do {
                _ = try await manager.updatePendingMessage(reqId: target.reqId, text: text)
                corrected[target.reqId] = text
            } catch let error as SyncManagerError where error.code == .invalidParameter {
                // A lane still running from this step may have moved it on (syncing, or
                // sent) between the read of the outbox and the call: the contract refuses then.
                log.append("  refused: on its way")
            }
        }
    }

    /// Whether alice edited `message`, or corrected it before it was sent: its text is
    /// then checked against what she last wrote (``checkFinal(_:droppedAfterFailing:context:)``).
    func changedText(of message: Message) -> Bool {
        lastText[Ref(channelURL: message.channelURL, messageId: message.messageId)] != nil || corrected[message.reqId] != nil
    }

    mutating func noteFailures(_ operations: [OutboxOperation]) {
        for operation in operations { failed.insert(Ref(channelURL: operation.channelURL, messageId: operation.messageId)) }
    }

    /// A view shows each message with the user's queued edits on top and hides those
    /// being deleted, whatever the connection: in its succeeded list, and in its pending
    /// list (failed list, answered on a resend) for messages answered and waiting for
    /// their echo (`awaiting`, the engine's answers by request id: a listed entry may not
    /// carry the id its answer gave).
    static func checkShown(
        _ succeeded: [Message], pending: [Message] = [], failed: [Message] = [], awaiting: [String: Message] = [:],
        queued: [QueuedOperation], context: String
    ) throws {
        // Pending means created, uploading or syncing (API §2), ascending by creation
        // whichever way each message entered the list (sent, resent, fetched, relaunched).
        let notPending = pending.filter { !$0.syncState.isPending }.map(\.syncState)
        #expect(notPending.isEmpty, "a pending list holds messages \(notPending): \(context)")
        let created = pending.map(\.createdAt)
        #expect(created == created.sorted(), "a pending list is out of order \(created): \(context)")
        let answered = (pending + failed).compactMap { entry -> Message? in
            guard let answer = awaiting[entry.reqId] else { return nil }
            var shown = entry
            shown.messageId = answer.messageId
            return shown
        }
        guard !succeeded.isEmpty || !answered.isEmpty else { return }
        let byMessage = Dictionary(grouping: queued) { Ref(channelURL: $0.channelURL, messageId: $0.messageId) }
        for message in succeeded + answered {
            let operations = byMessage[Ref(channelURL: message.channelURL, messageId: message.messageId)] ?? []
            #expect(!operations.contains { $0.operation.kind == .deletion }, "a message being deleted is shown: \(context)")
            if let edit = operations.last(where: { $0.operation.kind == .edit }) {
                #expect(message.text == edit.operation.text && message.isEditPending, "the queued edit is shown: \(context)")
            } else {
                #expect(!message.isEditPending, "no edit is queued for \(message.messageId): \(context)")
            }
        }
    }

    /// After settling online: nothing queued; the server holds the last text of each
    /// edited message and none of the deleted ones, except where the operation failed.
    ///
    /// - Parameter droppedAfterFailing: messages that failed and then left the outbox
    ///   unsent (policy `.none`, the failed list's count, a cancel): an earlier attempt,
    ///   its answer lost, may have stored them with the text it carried, and a correction
    ///   made after that attempt is owed only while ChatSync still holds the message.
    func checkFinal(_ harness: Harness, droppedAfterFailing: Set<String> = [], context: String) async throws {
        #expect(try harness.manager.engine.store.operations().isEmpty, "no edit or deletion left: \(context)")
        let onServer = Dictionary(
            await harness.server.messages(in: Harness.channel).map { ($0.messageId, $0) }, uniquingKeysWith: { first, _ in first })
        for (ref, text) in lastText where !failed.contains(ref) && !deleted.contains(ref) {
            #expect(onServer[ref.messageId]?.text == text, "the last edit of \(ref.messageId) holds: \(context)")
        }
        for ref in deleted where !failed.contains(ref) {
            #expect(onServer[ref.messageId] == nil, "the deletion of \(ref.messageId) is not lost: \(context)")
        }
        for (reqId, text) in corrected where !droppedAfterFailing.contains(reqId) {
            guard let message = onServer.values.first(where: { $0.reqId == reqId }) else { continue }
            // Stored with the text of an attempt made before the correction, its follow-up
            // edit may have failed for good (retries spent): then the service keeps that text.
            guard !failed.contains(Ref(channelURL: message.channelURL, messageId: message.messageId)) else { continue }
            let editedSince = lastText[Ref(channelURL: message.channelURL, messageId: message.messageId)] != nil
            #expect(
                message.text == text || editedSince,
                "a corrected message arrives with its correction: the service has '\(message.text)', not '\(text)': \(context)")
        }
    }
}
