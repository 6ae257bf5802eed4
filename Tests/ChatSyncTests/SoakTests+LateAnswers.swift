import ChatSyncTesting
import Testing

@testable import ChatSync

/// The soak's late answers: a slow link on which the service makes each answer at once
/// but it arrives later, so that others' edits and deletions (and new messages) reach
/// the app in real time before the pages and change logs made before them.
extension SoakTests {
    func lateAnswers(
        _ harness: Harness, _ subjects: [Subject], step: Int, random: inout SeededGenerator, state: inout SoakState
    ) async throws {
        let server = harness.server
        await server.holdReadAnswers()
        state.log.append("late answers:")
        // A fetch whose page is made now (unless the cache serves it) and waits on its way.
        let subject = subjects.randomElement(using: &random)!
        let direction: Direction = Bool.random(using: &random) ? .previous : .next
        let fetch = await FetchUnderway.start(subject.model.collection, direction, engine: harness.manager.engine)
        _ = await eventually(turns: 20_000) { await server.heldReadAnswerCount > 0 }
        state.log.append("  fetch \(direction) \(subject.channelURL), \(await server.heldReadAnswerCount) answers held")
        for index in 0..<Int.random(in: 1...4, using: &random) {
            let channelURL = Bool.random(using: &random) ? subject.channelURL : Self.channels.randomElement(using: &random)!
            let all = await server.messages(in: channelURL)
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !all.isEmpty:
                let target = all.randomElement(using: &random)!
                try await server.delete(messageId: target.messageId, channelURL: channelURL)
                state.withdrawn.insert(target.reqId)
                state.log.append("  others delete \(target.messageId) in \(channelURL)")
            case 1 where !all.isEmpty:
                let target = all.randomElement(using: &random)!
                let text = "late \(step)-\(index)"
                try await server.update(messageId: target.messageId, channelURL: channelURL, text: text)
                state.allowedTexts[MessageRef(target)]?.insert(text)
                state.log.append("  others edit \(target.messageId) in \(channelURL)")
            default:
                try await server.post(.text("late other \(index)"), from: Self.senders.randomElement(using: &random)!, to: channelURL)
                state.log.append("  post to \(channelURL)")
            }
            for _ in 0..<Int.random(in: 0...20, using: &random) { await Task.yield() }
        }
        await server.releaseReadAnswers()
        await fetched(harness, subject, direction, hasMore: await fetch.hasMore, state: &state)
    }
}
