import ChatSyncTesting
import Testing

@testable import ChatSync

/// A chain of retries counts the tries that got nowhere, not every loss: on a flaky link a
/// sync that needs many requests loses one now and then, and before, eight losses in all
/// ended it for good (the soak found both after a `clearCache()`, with a fifth of the
/// requests failing and a fifth of the answers lost):
///
/// - a filtered view's newest page, completed in the background, stayed short (two
///   photos where a page of them existed);
/// - a view at the newest messages was never caught up after a reconnect, so a quiet
///   channel's screen stopped short of its newest messages.
@Suite("Retries after progress", .capturingLogs)
struct RetriesAfterProgressTests {
    /// Carol's four messages, then sixty of bob's: a view of carol's needs twenty requests
    /// of three older messages to find her page, and every other one is lost.
    @Test func aSparseViewsNewestPageIsCompletedOverALinkThatLosesEveryOtherRequest() async throws {
        let (harness, link) = try await Harness.makeWrapped(
            configure: { $0.syncBatchSize = 3 }, wrapper: { EveryOtherRequestLost(base: $0, losing: .olderPages) })
        let server = harness.server
        for index in 0..<4 { try await server.post(.text("carol \(index)"), from: "carol", to: Harness.channel) }
        for index in 0..<60 { try await server.post(.text("bob \(index)"), from: "bob", to: Harness.channel) }
        let carol = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: MessageFilter(senderIds: ["carol"]), limit: 4)
        let events = EventRecorder()
        await carol.setHandler(events)

        await harness.online()

        #expect(await link.lost > SyncEngine.syncRetryLimit, "more losses in all than one chain of retries allows in a row")
        #expect(await carol.succeededMessages.map(\.text) == (0..<4).map { "carol \($0)" }, "carol's newest page")
        #expect(await !harness.manager.engine.owesNewestPage(viewId: carol.id))
        await checkInvariants(carol, events)
    }

    /// A view at the newest messages while the connection is away, forty messages posted
    /// meanwhile: the reconnect catches it up three at a time, and every other request is lost.
    @Test func aReconnectCatchesAViewUpOverALinkThatLosesEveryOtherRequest() async throws {
        let (harness, link) = try await Harness.makeWrapped(
            history: 10, configure: { $0.syncBatchSize = 3 }, wrapper: { EveryOtherRequestLost(base: $0, losing: .newerPages) })
        let server = harness.server
        let (view, events) = try await harness.collectionAtTheNewestMessages(limit: 10)
        await server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<40 { try await server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
        await link.startLosing()

        await server.setOnline(true, for: "alice")
        await harness.settle()

        #expect(await link.lost > SyncEngine.syncRetryLimit, "more losses in all than one chain of retries allows in a row")
        #expect(await view.succeededMessages.last?.text == "away 39", "the view reached the newest message")
        #expect(await harness.manager.engine.isLive(Harness.channel))
        await checkInvariants(view, events)
    }

    /// Forty messages cached and shown; while the connection is away, bob deletes thirty
    /// and edits ten of them: the reconnect reads the change logs two at a time, twenty
    /// pages, and every other request is lost. Each pass applies one page before it loses
    /// the next; before, that was no progress, so the chain gave up after nine pages and
    /// the view kept showing messages deleted long ago (the last note named it).
    @Test func aReconnectAppliesManyPagesOfChangeLogsOverALinkThatLosesEveryOtherRequest() async throws {
        let (harness, link) = try await Harness.makeWrapped(
            history: 40, configure: { $0.syncBatchSize = 2 }, wrapper: { EveryOtherRequestLost(base: $0, losing: .changeLogs) })
        let server = harness.server
        let (view, events) = try await harness.collectionAtTheNewestMessages(limit: 40)
        await harness.settle()
        #expect(await view.succeededMessages.count == 40)
        await server.setOnline(false, for: "alice")
        await harness.settle()
        let history = await server.messages(in: Harness.channel)
        for message in history.prefix(30) { try await server.delete(messageId: message.messageId, channelURL: Harness.channel) }
        for message in history.suffix(10) {
            _ = try await server.update(messageId: message.messageId, channelURL: Harness.channel, text: "edited \(message.text)")
        }
        await link.startLosing()

        await server.setOnline(true, for: "alice")
        await harness.settle()

        #expect(await link.lost > SyncEngine.syncRetryLimit, "more losses in all than one chain of retries allows in a row")
        let truth = await server.messages(in: Harness.channel)
        #expect(await view.succeededMessages.map(\.messageId) == truth.map(\.messageId), "every deletion reached the view")
        #expect(await view.succeededMessages.map(\.text) == truth.map(\.text), "every edit reached the view")
        #expect(await !harness.manager.engine.syncRetriesRanOut)
        await checkInvariants(view, events)
    }

    /// A view at the newest messages while the connection is away, sixty messages posted
    /// meanwhile; back, every request for newer messages is lost, so the reconnect's chain
    /// runs out with the view behind. Then a new screen at the newest messages fetches its
    /// page: the channel goes live, and the first view, loose in a live channel, is caught
    /// up three at a time while every other request is lost. Before, a live channel's views
    /// counted for nothing (so that a busy channel's real-time messages would not keep
    /// retries going), and the chain gave up after nine of the twenty pages (a reviewer's
    /// low finding of the last session).
    @Test func aLooseViewOfALiveChannelIsCaughtUpOverALinkThatLosesEveryOtherRequest() async throws {
        let (harness, link) = try await Harness.makeWrapped(
            history: 10, configure: { $0.syncBatchSize = 3 }, wrapper: { EveryOtherRequestLost(base: $0, losing: .newerPages) })
        let server = harness.server
        let engine = harness.manager.engine
        let (behind, events) = try await harness.collectionAtTheNewestMessages(limit: 10)
        await server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<60 { try await server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
        await link.loseAll()
        await server.setOnline(true, for: "alice")
        await harness.settle()
        try #require(await engine.syncRetriesRanOut, "the reconnect's chain ran out")
        let fresh = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 5)
        await harness.settle()
        try #require(await !engine.isLive(Harness.channel))

        let lostBefore = await link.lost
        await link.startLosing()
        _ = try await fresh.fetchSucceededMessages(.previous)
        try #require(await engine.isLive(Harness.channel), "the new screen's page proved the channel live")
        await harness.settle()

        #expect(await link.lost - lostBefore > SyncEngine.syncRetryLimit, "more losses since than one chain allows in a row")
        #expect(await behind.succeededMessages.last?.text == "away 59", "the view behind was caught up")
        #expect(await engine.isFollowingLive(viewId: behind.id))
        #expect(await !engine.syncRetriesRanOut)
        await checkInvariants(behind, events)
    }

    /// Change logs that say more follow but keep the token they were asked with would be
    /// asked for again for ever, within one pass, and each page would count as progress:
    /// taken as unanswered, they end the chain of retries (a reviewer's finding).
    @Test func changeLogsThatSayMoreFollowButKeepTheirTokenEndTheChain() async throws {
        let (harness, stuck) = try await Harness.makeWrapped(history: 5) { SteeredChangeLogs(base: $0) }
        let server = harness.server
        let (view, events) = try await harness.collectionAtTheNewestMessages(limit: 5)
        await server.setOnline(false, for: "alice")
        await harness.settle()
        await stuck.stick()

        await server.setOnline(true, for: "alice")
        await harness.settle()

        #expect(await harness.manager.engine.syncRetriesRanOut, "the chain ran out")
        #expect(await stuck.answeredStuck == 1 + SyncEngine.syncRetryLimit, "one request per pass")
        #expect(await view.succeededMessages.count == 5, "the cache still serves what it held")
        await checkInvariants(view, events)
    }

    /// Real-time messages extend a live channel's cached range: that is no progress of the
    /// reconnect sync, or a busy channel would start the count of another channel's
    /// failing retries over with every message, and they would go on for ever (a
    /// reviewer's read of the fix).
    @Test func aBusyLiveChannelIsNoProgressOfTheSync() async throws {
        let harness = try await Harness.make(history: 5)
        await harness.online()
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel, limit: 10)
        _ = try await view.fetchSucceededMessages(.previous)
        await harness.settle()
        let engine = harness.manager.engine
        #expect(await engine.isLive(Harness.channel))
        let before = await engine.syncReach()

        try await harness.server.post(.text("live"), from: "bob", to: Harness.channel)
        await harness.settle()

        #expect(await view.succeededMessages.last?.text == "live", "the message extended the live range")
        #expect(!before.isPassed(by: await engine.syncReach()))
    }
}

extension RetriesAfterProgressTests {
    /// A fresh view (opened at the newest messages, never fetched) waits while its channel
    /// is not proven live; twenty messages arrive meanwhile. The proof pages forward from
    /// the first of them, one message per request, and every other request is lost.
    @Test func aFreshViewsChannelIsProvenLiveFromItsArrivalsOverALinkThatLosesEveryOtherRequest() async throws {
        let (harness, link) = try await Harness.makeWrapped(
            history: 10, configure: { $0.syncBatchSize = 1 }, wrapper: { EveryOtherRequestLost(base: $0, losing: .newestPages) })
        let server = harness.server
        let engine = harness.manager.engine
        await harness.online()
        let view = try await harness.manager.messageCollection(channelURL: Harness.channel)
        let events = EventRecorder()
        await view.setHandler(events)
        await harness.settle()
        await server.setOnline(false, for: "alice")
        await harness.settle()
        // Back, but the newest page is never answered: the sync's retries give up, unproven.
        await link.loseAll()
        await server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await !engine.isLive(Harness.channel))
        await link.startLosing(.newerPages)

        try await harness.withEventsQueued {
            for index in 0..<20 { try await server.post(.text("new \(index)"), from: "bob", to: Harness.channel) }
        }
        await harness.settle()

        #expect(await link.lost > SyncEngine.syncRetryLimit, "more losses in all than one chain of retries allows in a row")
        #expect(await engine.isLive(Harness.channel), "proven live from the first arrival on")
        #expect(await view.succeededMessages.last?.text == "new 19", "the fresh view shows what came after it opened")
        await checkInvariants(view, events)
    }

    /// A view at the newest messages; back from away, the link loses every request for
    /// newer messages, so the sync's retries give up with the view behind. A message that
    /// arrives then says the link works: the view's catch-up starts again (before, only a
    /// fresh view's did, and this screen stayed behind until the next reconnect).
    @Test func aMessageArrivingAfterTheRetriesGaveUpCatchesALooseViewUp() async throws {
        let (harness, link) = try await Harness.makeWrapped(
            history: 10, configure: { $0.syncBatchSize = 3 }, wrapper: { EveryOtherRequestLost(base: $0, losing: .newerPages) })
        let server = harness.server
        let engine = harness.manager.engine
        let (view, events) = try await harness.collectionAtTheNewestMessages(limit: 20)
        await server.setOnline(false, for: "alice")
        await harness.settle()
        for index in 0..<5 { try await server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
        await link.loseAll()
        await server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await link.lost > SyncEngine.syncRetryLimit, "the retries ran out")
        #expect(await view.succeededMessages.last?.text == "h9", "left behind")
        #expect(await !engine.isLive(Harness.channel))

        await link.stopLosing()
        try await server.post(.text("after"), from: "carol", to: Harness.channel)
        await harness.settle()

        #expect(await view.succeededMessages.suffix(6).map(\.text) == (0..<5).map { "away \($0)" } + ["after"])
        #expect(await engine.isLive(Harness.channel))
        await checkInvariants(view, events)
    }
}
