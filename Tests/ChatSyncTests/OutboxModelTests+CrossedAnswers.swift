import ChatSyncTesting
import Testing

@testable import ChatSync

extension OutboxModelTests {
    /// A send alice made in ``crossedAnswers(_:_:attachment:step:written:withdrawn:random:log:)``.
    struct CrossedSend {
        let reqId: String
        let lane: SendLane
        let text: String
    }

    /// The service makes and applies each answer at once, but the answers of sends in both
    /// lanes, of alice's edits and deletions and of the views' fetches reach the app one by
    /// one in an order drawn apart from the order they were made in (a media send answered
    /// before the text sent earlier, a page made before an edit arriving after its
    /// answer), while bob posts. Answers the sends made, and how many read and write
    /// answers went ahead of older ones of their kind.
    static func crossedAnswers(
        _ harness: Harness, _ subjects: [ModelSubject], attachment: String, step: Int, written: inout OwnWrites,
        withdrawn: inout Set<String>, random: inout SeededGenerator, log: inout [String]
    ) async throws -> (sends: [CrossedSend], crossed: AnswersCrossed) {
        try await withAnswersHeld(on: harness.server) {
            try await crossAnswers(
                harness, subjects, attachment: attachment, step: step, written: &written, withdrawn: &withdrawn, random: &random,
                log: &log)
        }
    }

    private static func crossAnswers(
        _ harness: Harness, _ subjects: [ModelSubject], attachment: String, step: Int, written: inout OwnWrites,
        withdrawn: inout Set<String>, random: inout SeededGenerator, log: inout [String]
    ) async throws -> (sends: [CrossedSend], crossed: AnswersCrossed) {
        let server = harness.server
        log.append("crossed answers:")
        var sends: [CrossedSend] = []
        var fetches: [FetchUnderway] = []
        var fetching: Set<String> = []
        for index in 0..<Int.random(in: 2...6, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1:
                let media = Bool.random(using: &random)
                let text = "x\(step).\(index)"
                let params: MessageParams =
                    media ? .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: text) : .text(text)
                let message = try await harness.manager.sendMessage(params, channelURL: Harness.channel)
                sends.append(CrossedSend(reqId: message.reqId, lane: params.kind.lane, text: text))
                log.append("  send \(media ? "media" : "text")")
            case 2:
                let subjectIndex = Int.random(in: 0..<subjects.count, using: &random)
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                guard fetching.insert("\(subjectIndex) \(direction)").inserted else { continue }
                fetches.append(await FetchUnderway.start(subjects[subjectIndex].collection, direction, engine: harness.manager.engine))
                log.append("  fetch \(direction) (view \(subjectIndex))")
            default:
                if Bool.random(using: &random) {
                    // Labelled apart from the step's own writes: two edits of one message
                    // with the same text would leave the failed one's text shown by the other
                    // (`failuresReportedBeforeTheirUndo` tells edits apart by their text).
                    try await written.makeOne(
                        step: 1_000 + 10 * step + index, harness: harness, random: &random, log: &log, withdrawn: &withdrawn)
                } else {
                    try await server.post(.text("y\(step).\(index)"), from: "bob", to: Harness.channel)
                    log.append("  post by bob")
                }
            }
            for _ in 0..<Int.random(in: 0...20, using: &random) { await Task.yield() }
        }
        // Let the lanes' and views' requests reach the service, as far as the connection lets them.
        for _ in 0..<200 { await Task.yield() }
        let crossed = await server.releaseHeldAnswersInDrawnOrder(random: &random, log: &log)
        log.append("  crossed \(crossed)")
        for fetch in fetches { _ = await fetch.hasMore }
        return (sends, crossed)
    }
}
