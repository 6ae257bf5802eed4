import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Several views fetch (a view in both directions at once, at times), background sync
    /// asks what it asks, and alice edits and deletes her messages; the service makes and
    /// applies each answer at once, but the answers reach the app one by one in an order
    /// drawn apart from the order they were made in (a page made after a deletion arriving
    /// before one made before it, an edit's answer before the page that shows the older
    /// text), while others post, edit and delete in real time. The step's checks, after
    /// settling, compare every view with the service. Answers how many reads and how many
    /// writes were let through ahead of an older one.
    ///
    /// The other steps hold one page at a time (``pageAnsweredBeforeChanges(_:_:_:_:random:log:)``)
    /// or let held answers through together, in the order they were made.
    static func crossedAnswers(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, step: Int, random: inout SeededGenerator,
        log: inout [String]
    ) async throws -> AnswersCrossed {
        try await withAnswersHeld(on: harness.server) {
            try await crossAnswers(harness, subjects, &rare, step: step, random: &random, log: &log)
        }
    }

    private static func crossAnswers(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, step: Int, random: inout SeededGenerator,
        log: inout [String]
    ) async throws -> AnswersCrossed {
        let server = harness.server
        log.append("crossed answers:")
        var fetches: [(subject: ModelSubject, direction: Direction, fetch: FetchUnderway)] = []
        for index in 0..<Int.random(in: 2...6, using: &random) {
            let all = await server.messages(in: Harness.channel)
            switch Int.random(in: 0..<5, using: &random) {
            case 0, 1:
                let subject = subjects.randomElement(using: &random)!
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                guard !fetches.contains(where: { $0.subject.collection === subject.collection && $0.direction == direction }) else {
                    continue
                }
                let fetch = await FetchUnderway.start(subject.collection, direction, engine: harness.manager.engine)
                fetches.append((subject, direction, fetch))
                log.append("  fetch \(direction) \(subject.filter)")
            case 2:
                guard let target = all.filter({ $0.senderId == "alice" }).randomElement(using: &random) else { continue }
                do {
                    if Bool.random(using: &random) {
                        log.append("  alice edits \(target.messageId)")
                        _ = try await harness.manager.updateMessage(
                            messageId: target.messageId, channelURL: Harness.channel, text: "alice's crossed \(step).\(index)")
                    } else {
                        log.append("  alice deletes \(target.messageId)")
                        try await harness.manager.deleteMessage(messageId: target.messageId, channelURL: Harness.channel)
                    }
                } catch let error as SyncManagerError where error.code == .invalidParameter {
                    // Not in her cache, or its deletion is queued already.
                    log.append("    refused")
                }
            case 3:
                guard let target = all.randomElement(using: &random) else { continue }
                if Bool.random(using: &random) {
                    log.append("  others edit \(target.messageId)")
                    try await server.update(messageId: target.messageId, channelURL: Harness.channel, text: "crossed \(step).\(index)")
                } else {
                    log.append("  others delete \(target.messageId)")
                    try await server.delete(messageId: target.messageId, channelURL: Harness.channel)
                }
            default:
                let sender = Self.senders[Int.random(in: 0...2, using: &random)]
                log.append("  post by \(sender)")
                try await server.post(.text("crossed \(step).\(index)"), from: sender, to: Harness.channel)
            }
            for _ in 0..<Int.random(in: 0...20, using: &random) { await Task.yield() }
        }
        // Let the views' and the lane's requests reach the service.
        for _ in 0..<200 { await Task.yield() }
        let crossed = await server.releaseHeldAnswersInDrawnOrder(random: &random, log: &log)
        for (subject, direction, fetch) in fetches {
            // Where the fetch left the view's edge is what it says at its return, as for any fetch.
            if let hasMore = await fetch.hasMore {
                await rare.fetched(subject, direction, hasMore: hasMore, server: server, capacity: 200)
            }
        }
        return crossed
    }
}
