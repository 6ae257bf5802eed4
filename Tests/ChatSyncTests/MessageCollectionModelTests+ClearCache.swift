import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Alice clears the cache (a "free up space" button), in whatever connection state the
    /// schedule is in, and in half the steps while a view's fetch is out: its answer comes
    /// after the clear. The views empty, the outbox stays, and everything the step's
    /// checks compare (views against the service between their ends, edits, events) must
    /// hold once settled. Views at `.max` after the clear (those that showed the newest
    /// messages stand at them again) are fresh views, the one whose fetch was out across the
    /// clear included: online, the clear proves their channel live at once, so they must
    /// show its newest messages when settled, even in a channel where nobody posts again;
    /// away, they follow from the next reconnect on.
    static func cacheCleared(
        _ harness: Harness, _ late: LateMessageAnswers, _ subjects: [ModelSubject], _ rare: inout RarePaths,
        online: Bool, running: Bool, random: inout SeededGenerator, log: inout [String]
    ) async throws {
        guard online, running, Bool.random(using: &random) else {
            log.append("alice clears the cache")
            try await harness.manager.clearCache()
            await watchViewsAtNewest(harness, subjects, &rare, provenNow: online && running)
            return
        }
        let subject = subjects.randomElement(using: &random)!
        let direction: Direction = Bool.random(using: &random) ? .previous : .next
        let (fetch, held) = await fetchWithItsAnswerHeld(harness, late, subject, direction)
        if !held { await late.release() }  // still armed: the clear's own requests must not be held
        log.append("alice clears the cache\(held ? " while a fetch's answer is out" : "")")
        try await harness.manager.clearCache()
        await watchViewsAtNewest(harness, subjects, &rare, provenNow: true)
        if held, Bool.random(using: &random) {
            log.append("  meanwhile: others edit and delete")
            try await RarePaths.othersEditAndDelete(harness.server, text: "after the clear", random: &random, log: &log)
        }
        await harness.settle()
        await late.release()
        _ = try? await fetch.value
    }

    /// After a clear, every view at `.max` stands at the newest messages. Proven live at once
    /// (online), it must show the channel's newest message, whenever that was posted (the
    /// lowest watermark); away, its watch starts at the reconnect. A view in history keeps
    /// its viewpoint and is not watched.
    private static func watchViewsAtNewest(
        _ harness: Harness, _ subjects: [ModelSubject], _ rare: inout RarePaths, provenNow: Bool
    ) async {
        for subject in subjects {
            let id = subject.collection.id
            let atNewest = await harness.manager.engine.viewpoint(id) == .max
            rare.following[id] = atNewest ? (provenNow ? .min : .max) : nil
        }
    }
}
