import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// A view fetches; the service makes the page, and the answer is held on its way (a
    /// slow link) while others delete, edit and post, in real time, and in a third of the
    /// steps while alice is away and every change-log token expires, so that her return
    /// drops the cached history. Then the answer arrives: it knew less than the cache does
    /// by then, and must bring back neither a deleted message nor a history the cache
    /// dropped (the step's checks, after settling, compare the views with the service).
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
        let expires = Int.random(in: 0..<3, using: &random) == 0
        if expires {
            log.append("  meanwhile: away, tokens expire, back")
            await rare.connectionBreaks(harness, subjects)
            await server.setOnline(false, for: "alice")
            await harness.settle()
            try await RarePaths.othersEditAndDelete(server, text: "late edit", random: &random, log: &log)
            await server.expireMessageChangeLogTokens()
            await rare.connectionBack(server)
            await server.setOnline(true, for: "alice")
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
