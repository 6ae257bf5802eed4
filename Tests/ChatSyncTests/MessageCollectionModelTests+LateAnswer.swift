import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// A view fetches; the service makes the page, and the answer is held on its way (a
    /// slow link) while others delete, edit and post, in real time, and in a third of the
    /// steps while alice is away and every change-log token expires, so that her return
    /// drops the cached history, in another third while she is away and the change logs
    /// of her return tell of the changes. Then the answer arrives: it knew less than the
    /// cache does by then, and must bring back neither a deleted message, nor an older copy
    /// of an edited one, nor a history the cache dropped (the step's checks, after
    /// settling, compare the views with the service).
    /// Answers whether the tokens expired.
    static func pageAnsweredBeforeChanges(
        _ harness: Harness, _ late: LateMessageAnswers, _ subjects: [ModelSubject], _ rare: inout RarePaths,
        random: inout SeededGenerator, log: inout [String]
    ) async throws -> Bool {
        let subject = subjects.randomElement(using: &random)!
        let direction: Direction = Bool.random(using: &random) ? .previous : .next
        let (fetch, held) = await fetchWithItsAnswerHeld(harness, late, subject, direction)
        guard held else {
            await late.release()
            if let hasMore = try? await fetch.value {
                await rare.fetched(subject, direction, hasMore: hasMore, server: harness.server, capacity: 200)
            }
            log.append("fetch \(direction) \(subject.filter) (no page asked)")
            return false
        }
        log.append("fetch \(direction) \(subject.filter), its answer held")
        let server = harness.server
        // A third of the steps: away while every token expires; a third: away while the
        // tokens stay, so that the change logs of her return (not real time) tell of the
        // edits and deletions before the held answer arrives; a third: real time only.
        let away = Int.random(in: 0..<3, using: &random)
        let expires = away == 0
        if away < 2 {
            log.append(expires ? "  meanwhile: away, tokens expire, back" : "  meanwhile: away, others edit and delete, back")
            await rare.connectionBreaks(harness, subjects)
            await server.setOnline(false, for: "alice")
            await harness.settle()
            try await RarePaths.othersEditAndDelete(server, text: "late edit", random: &random, log: &log)
            if expires {
                await server.expireMessageChangeLogTokens()
            } else if let next = await nextBeyondTheView(subject, direction, server) {
                // Most likely on the page held: only the logs can tell the app of its change.
                if Bool.random(using: &random) {
                    log.append("  delete \(next.messageId), beyond the view")
                    try await server.delete(messageId: next.messageId, channelURL: Harness.channel)
                } else {
                    log.append("  edit \(next.messageId), beyond the view")
                    try await server.update(messageId: next.messageId, channelURL: Harness.channel, text: "late edit")
                }
            }
            await rare.connectionBack(server)
            await server.setOnline(true, for: "alice")
            // Her return's change logs are applied while the answer is still held.
            if !expires { await harness.settle() }
        }
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let all = await server.messages(in: Harness.channel)
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !all.isEmpty:
                let target = all.randomElement(using: &random)!
                log.append("  meanwhile: delete \(target.messageId)")
                try await server.delete(messageId: target.messageId, channelURL: Harness.channel)
            case 1 where !all.isEmpty:
                let target = all.randomElement(using: &random)!
                log.append("  meanwhile: edit \(target.messageId)")
                try await server.update(messageId: target.messageId, channelURL: Harness.channel, text: "while late")
            default:
                log.append("  meanwhile: post")
                try await server.post(.text("while late"), from: "carol", to: Harness.channel)
            }
        }
        // The held answer is the app's own call: the engine's background work ends without it.
        await harness.settle()
        await late.release()
        if let hasMore = try? await fetch.value {
            // Where the fetch left the view's edge is what it says at its return, as for any fetch.
            await rare.fetched(subject, direction, hasMore: hasMore, server: server, capacity: 200)
        }
        log.append("  the answer arrived")
        return expires
    }

    /// The service's message that a fetch of `subject` in `direction` shows first.
    private static func nextBeyondTheView(
        _ subject: ModelSubject, _ direction: Direction, _ server: SimulatedChatServer
    ) async -> Message? {
        let shown = await subject.collection.succeededMessages
        let all = await server.messages(in: Harness.channel).filter(subject.filter.matches)
        switch direction {
        case .previous: return shown.first.map { edge in all.last { $0.sortKey < edge.sortKey } } ?? all.last
        case .next: return shown.last.flatMap { edge in all.first { $0.sortKey > edge.sortKey } }
        }
    }

    /// Starts a fetch of `subject` whose answer, if it asks the service, is held on its way
    /// (after settling); answers the fetch and whether an answer is held. Served from the
    /// cache, the fetch asks nothing: a bounded wait, then nothing is held.
    static func fetchWithItsAnswerHeld(
        _ harness: Harness, _ late: LateMessageAnswers, _ subject: ModelSubject, _ direction: Direction
    ) async -> (fetch: Task<Bool, any Error>, held: Bool) {
        await harness.settle()
        await late.holdNextAnswer()
        let done = LockedState(false)
        let fetch = Task {
            defer { done.withLock { $0 = true } }
            return try await subject.collection.fetchSucceededMessages(direction)
        }
        _ = await eventually(turns: 200_000) { await late.isHolding || done.withLock { $0 } }
        return (fetch, await late.isHolding)
    }
}
