import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Alice clears the cache (a "free up space" button), in whatever connection state the
    /// schedule is in, and in half the steps while a view's fetch is out: its answer comes
    /// after the clear. The views empty, the outbox stays, and everything the step's
    /// checks compare (views against the service between their ends, edits, events) must
    /// hold once settled. Views that followed the newest messages stand at them again, as
    /// fresh views do: from the next reconnect on (when the channel is proven live at the
    /// latest) every newer message must reach them. A view whose fetch was out across the
    /// clear is watched again once the app fetches it.
    static func cacheCleared(
        _ harness: Harness, _ late: LateMessageAnswers, _ subjects: [ModelSubject], _ rare: inout RarePaths,
        online: Bool, running: Bool, random: inout SeededGenerator, log: inout [String]
    ) async throws {
        for id in rare.following.keys { rare.following[id] = .max }
        guard online, running, Bool.random(using: &random) else {
            log.append("alice clears the cache")
            try await harness.manager.clearCache()
            return
        }
        let subject = subjects.randomElement(using: &random)!
        let direction: Direction = Bool.random(using: &random) ? .previous : .next
        let (fetch, held) = await fetchWithItsAnswerHeld(harness, late, subject, direction)
        rare.following[subject.collection.id] = nil
        log.append("alice clears the cache\(held ? " while a fetch's answer is out" : "")")
        try await harness.manager.clearCache()
        if held, Bool.random(using: &random) {
            log.append("  meanwhile: others edit and delete")
            try await RarePaths.othersEditAndDelete(harness.server, text: "after the clear", random: &random, log: &log)
        }
        await harness.settle()
        await late.release()
        _ = try? await fetch.value
    }
}
