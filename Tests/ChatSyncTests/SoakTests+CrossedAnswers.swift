import ChatSyncTesting
import Testing

@testable import ChatSync

/// The soak's crossed answers: the service makes and applies each answer at once, but the
/// answers of reads and writes (sends of both lanes in several channels, alice's edits and
/// deletions, their errors too, and fetches of several views) reach the app one by one in an
/// order drawn apart from the order they were made in, while others post and edit.
/// The other generators hold answers and let them all through together, which delivers
/// them in the order they were made.
extension SoakTests {
    func crossedAnswers(
        _ harness: Harness, _ subjects: [Subject], attachment: String, step: Int, random: inout SeededGenerator,
        state: inout SoakState
    ) async throws {
        try await withAnswersHeld(on: harness.server) {
            try await crossAnswers(harness, subjects, attachment: attachment, step: step, random: &random, state: &state)
        }
    }

    private func crossAnswers(
        _ harness: Harness, _ subjects: [Subject], attachment: String, step: Int, random: inout SeededGenerator,
        state: inout SoakState
    ) async throws {
        let server = harness.server
        state.log.append("crossed answers:")
        var fetches: [(subject: Subject, direction: Direction, fetch: FetchUnderway)] = []
        for index in 0..<Int.random(in: 2...6, using: &random) {
            let channelURL = Self.channels.randomElement(using: &random)!
            switch Int.random(in: 0..<5, using: &random) {
            case 0, 1:
                let media = Int.random(in: 0..<3, using: &random) == 0
                let text = "crossed \(step)-\(index)"
                let params: MessageParams =
                    media ? .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: text) : .text(text)
                let message = try await harness.manager.sendMessage(params, channelURL: channelURL)
                state.sent.append(Sent(reqId: message.reqId, channelURL: channelURL, lane: params.kind.lane, permanent: false, text: text))
                state.log.append("  send \(media ? "media" : "text") to \(channelURL)")
            case 2:
                let subject = subjects.randomElement(using: &random)!
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                guard !fetches.contains(where: { $0.subject.model.collection === subject.model.collection && $0.direction == direction })
                else { continue }
                let fetch = await FetchUnderway.start(subject.model.collection, direction, engine: harness.manager.engine)
                fetches.append((subject, direction, fetch))
                state.log.append("  fetch \(direction) \(subject.channelURL)")
            case 3:
                if let target = await server.messages(in: channelURL).filter({ $0.senderId == "alice" }).randomElement(using: &random) {
                    // Labelled apart from the step's own edit: two edits of one message with
                    // one text would leave the failed one's text shown by the other.
                    try await ownEditOrDelete(target, step: 1_000 + 10 * step + index, harness: harness, random: &random, state: &state)
                }
            default:
                let all = await server.messages(in: channelURL)
                if let target = all.randomElement(using: &random), Bool.random(using: &random) {
                    let text = "crossed edit \(step)-\(index)"
                    try await server.update(messageId: target.messageId, channelURL: channelURL, text: text)
                    state.allowedTexts[MessageRef(target)]?.insert(text)
                    state.log.append("  others edit \(target.messageId) in \(channelURL)")
                } else {
                    let sender = Self.senders.randomElement(using: &random)!
                    try await server.post(.text("crossed other \(index)"), from: sender, to: channelURL)
                    state.log.append("  post to \(channelURL)")
                }
            }
            for _ in 0..<Int.random(in: 0...20, using: &random) { await Task.yield() }
        }
        // Let the lanes' and views' requests reach the server, as far as the connection lets them.
        for _ in 0..<200 { await Task.yield() }
        // A later lane's send answered before an earlier channel's, a page before the send
        // answered first, an edit's answer after the next send's.
        let crossed = await server.releaseHeldAnswersInDrawnOrder(random: &random, log: &state.log)
        state.answersCrossed += crossed
        for (subject, direction, fetch) in fetches {
            await fetched(harness, subject, direction, hasMore: await fetch.hasMore, state: &state)
        }
    }
}
