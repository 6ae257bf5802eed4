import ChatSyncTesting
import Testing

@testable import ChatSync

extension MessageCollectionModelTests {
    /// Every view closes and opens again at the newest messages, never fetched: before the
    /// connection breaks (they stand at the cache's newest range and wait to be caught up),
    /// or while away, on the cache or on a cache cleared first (they wait for the channel
    /// to be proven live). Alice comes back on a link that loses every request for the
    /// newest page or newer messages, so the sync's retries give up with the channel
    /// unproven. Then others post a burst, and the link loses every other request for newer
    /// messages. The burst must restart the wait (before, only fresh views' did), and each
    /// try that got further (a page of the proof paged forward from the burst's first
    /// message, a view caught up further) must keep the retries going until the channel is
    /// live and the views show the burst (`RarePaths.check`, after the step settles).
    static func freshViewsProvenLiveOnAFlakyLink(
        _ harness: Harness, _ losses: EveryOtherRequestLost, _ subjects: inout [ModelSubject], _ rare: inout RarePaths,
        random: inout SeededGenerator, log: inout [String]
    ) async throws {
        let count = Int.random(in: 1...(RarePaths.threshold - 5), using: &random)
        let opening = ["before the break", "while away", "while away on a cleared cache"].randomElement(using: &random)!
        log.append(
            "views reopened at the newest messages \(opening), back unproven, then \(count) posts over a link losing every other page")
        await harness.settle()
        func reopenViews() async throws {
            for index in subjects.indices {
                await subjects[index].collection.remove()
                rare.following[subjects[index].collection.id] = nil
                subjects[index] = try await ModelSubject.open(
                    harness.manager, filter: subjects[index].filter, limit: Int.random(in: 1...15, using: &random))
                rare.following[subjects[index].collection.id] = await harness.server.newestKey
            }
            await harness.settle()
        }
        if opening == "before the break" { try await reopenViews() }
        await rare.connectionBreaks(harness, subjects)
        await harness.manager.pauseSync()
        await harness.settle()
        if opening != "before the break" {
            if opening.hasSuffix("cleared cache") { try await harness.manager.clearCache() }
            try await reopenViews()
            for subject in subjects { rare.following[subject.collection.id] = .max }
        }
        await losses.startLosing(.proofs)
        await losses.loseAll()
        await rare.connectionBack(harness.server)
        await harness.manager.resumeSync()
        await harness.settle()
        await losses.startLosing(.newerPages)
        try await harness.withEventsQueued {
            for index in 0..<count { try await harness.server.post(.text("proof \(index)"), from: "bob", to: Harness.channel) }
        }
        await harness.settle()
        await losses.stopLosing()
    }
}
