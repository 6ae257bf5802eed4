import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

/// The soak's races around alice's own writes that the main schedule reaches only by
/// luck: an edit or deletion of a message whose answer came but whose echo has not, and
/// an app closed while an upload is under way. They draw from a generator of their own,
/// so the main schedule and the rare paths of each seed stay what they were.
extension SoakTests {
    func writeRace(
        _ harness: inout Harness, _ subjects: inout [Subject], attachment: String, random: inout SeededGenerator,
        state: inout SoakState
    ) async throws {
        if Bool.random(using: &random) {
            try await writeAwaitingEcho(harness, subjects, random: &random, state: &state)
        } else {
            try await relaunchDuringUpload(&harness, &subjects, attachment: attachment, random: &random, state: &state)
        }
    }

    /// Alice sends while her real-time events are held: the answer comes, the echo waits.
    /// She edits or deletes the message then, and the echo follows.
    private func writeAwaitingEcho(
        _ harness: Harness, _ subjects: [Subject], random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        let server = harness.server
        let channelURL = Self.channels.randomElement(using: &random)!
        await server.holdEvents(for: "alice")
        let message = try await harness.manager.sendMessage(.text("echo later \(state.log.count)"), channelURL: channelURL)
        state.sent.append(Sent(reqId: message.reqId, channelURL: channelURL, lane: .text, permanent: false))
        await harness.settle()
        let answered = await harness.manager.engine.outbox.awaitingEcho[message.reqId]
        var target = answered
        if target == nil { target = await server.messages(in: channelURL).first { $0.reqId == message.reqId } }
        state.log.append("send to \(channelURL) with its echo held\(answered == nil ? "" : " (answered)")")
        if let target {
            let ref = MessageRef(target)
            do {
                if Bool.random(using: &random) {
                    let text = "mine before echo \(state.log.count)"
                    let shown = try await harness.manager.updateMessage(messageId: target.messageId, channelURL: channelURL, text: text)
                    #expect(shown.text == text && shown.isEditPending, "an edit before the echo is shown at once")
                    // Every view of the channel that matches it listed it when it was sent, and
                    // while its echo is awaited it stays in the pending list: each shows the edit.
                    // A sync may cache it meanwhile, or a broken connection end the wait (it is
                    // then in no list until the next sync); both only ever end the wait, so one
                    // still awaited when read after the lists was awaited when they were read.
                    // One answered on an automatic resend is in the failed lists instead, and
                    // shows the edit there.
                    var listed: [Message?] = []
                    for subject in subjects where subject.channelURL == channelURL && subject.model.filter.matches(target) {
                        let collection = subject.model.collection
                        let failed = await collection.failedMessages.first { $0.reqId == target.reqId }
                        let pending = await collection.pendingMessages.first { $0.reqId == target.reqId }
                        listed.append(failed ?? pending)
                    }
                    let stillAwaited = await harness.manager.engine.outbox.awaitingEcho[target.reqId] != nil
                    // Awaited after the call, it was awaited during it: it is returned as the
                    // lists show it, `.syncing` (API §4.6: "that local message").
                    #expect(
                        !stillAwaited || shown.syncState == .syncing,
                        "an edit of a message awaiting its echo returns it as listed: \(shown.syncState) seed \(state.seed)")
                    if try Self.isQueued(.edit, of: target, harness) {
                        #expect(
                            listed.allSatisfy { stillAwaited ? $0?.text == text : $0 == nil || $0?.text == text },
                            "every view lists it with the edit while it is queued: \(listed) seed \(state.seed) \(state.log.suffix(4))")
                    }
                    state.operationsAsked += 1
                    state.allowedTexts[ref] = [text]
                    state.log.append("  alice edits it before its echo")
                } else {
                    try await harness.manager.deleteMessage(messageId: target.messageId, channelURL: channelURL)
                    state.operationsAsked += 1
                    state.withdrawn.insert(target.reqId)
                    state.deletedByAlice.insert(ref)
                    state.log.append("  alice deletes it before its echo")
                    // Awaiting its echo it is in pending (or failed) lists: it leaves them at once.
                    // (Whether a resolved one left the succeeded lists is checked after the step settles.)
                    var listing = false
                    for subject in subjects where subject.channelURL == channelURL {
                        let collection = subject.model.collection
                        listing = await collection.pendingMessages.contains { $0.reqId == target.reqId } || listing
                        listing = await collection.failedMessages.contains { $0.reqId == target.reqId } || listing
                    }
                    if try Self.isQueued(.deletion, of: target, harness) {
                        #expect(
                            !listing,
                            "a deleted message leaves the pending and failed lists at once: seed \(state.seed) \(state.log.suffix(4))")
                    }
                }
            } catch let error as SyncManagerError where error.code == .invalidParameter {
                // Neither cached nor awaiting its echo (the channel was not live, so the
                // answer did not wait): nothing of hers to change yet.
                #expect(answered == nil, "a message awaiting its echo can be edited and deleted: \(error)")
                state.log.append("  refused: \(error.message)")
            }
        }
        await server.releaseEvents(for: "alice")
    }

    /// Whether alice's `kind` of `message` still waits in the outbox. The lane may send it
    /// while a check reads the lists, and injected faults may fail it for good there,
    /// undone as they should be; operations only leave the queue, so one still queued
    /// when this is read after the lists was queued when they were read.
    private static func isQueued(_ kind: OutboxOperation.Kind, of message: Message, _ harness: Harness) throws -> Bool {
        try harness.manager.engine.store.operations().contains {
            $0.operation.kind == kind && $0.operation.messageId == message.messageId
        }
    }

    /// The app is closed while a media message uploads, and relaunched on the same file:
    /// the closed app's upload is cancelled and sends nothing; the new one sends it once.
    private func relaunchDuringUpload(
        _ harness: inout Harness, _ subjects: inout [Subject], attachment: String, random: inout SeededGenerator,
        state: inout SoakState
    ) async throws {
        let server = harness.server
        let channelURL = Self.channels.randomElement(using: &random)!
        await server.holdUploads()
        let message = try await harness.manager.sendMessage(
            .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: "closed mid-upload"),
            channelURL: channelURL)
        state.sent.append(Sent(reqId: message.reqId, channelURL: channelURL, lane: .media, permanent: false))
        let manager = harness.manager
        let uploading = await eventually(turns: 2_000) { await server.heldUploadCount > 0 }
        state.log.append("relaunch during an upload to \(channelURL)\(uploading ? "" : " (not started)")")
        for subject in subjects { await subject.model.collection.remove() }
        await manager.close()
        await server.releaseUploads()
        try await harness.reopen()
        subjects = try await openSubjects(harness, failures: state.failures)
        if state.running { await harness.manager.resumeSync() }
    }
}
