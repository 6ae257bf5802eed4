import ChatSync
import Testing

@testable import ChatServer

@Suite("Event hub")
struct EventHubTests {
    /// Ids that Swift's `==` takes for one (zoë with a precomposed ë, and with an e and a
    /// combining diaeresis) are two users' connections: an event for one never reaches
    /// the other, and closing one leaves the other open.
    @Test func usersWhoseIdsSpellAlikeHaveTheirOwnConnections() async throws {
        let (composed, decomposed) = ("zo\u{EB}", "zoe\u{308}")
        let hub = EventHub()
        let (composedId, composedStream) = await hub.connect(composed)
        let (_, decomposedStream) = await hub.connect(decomposed)
        var composedEvents = composedStream.makeAsyncIterator()
        var decomposedEvents = decomposedStream.makeAsyncIterator()
        let hers = ServiceEvent.channelRemoved(channelURL: "hers")
        let theirs = ServiceEvent.channelRemoved(channelURL: "theirs")
        await hub.send(hers, to: [composed])
        await hub.send(theirs, to: [decomposed, composed, decomposed])
        #expect(await decomposedEvents.next() == theirs, "the event for the other zoë did not reach her")
        #expect(await composedEvents.next() == hers)
        #expect(await composedEvents.next() == theirs, "one copy, however often a user is named")
        await hub.disconnect(composed, composedId)
        #expect(await composedEvents.next() == nil)
        #expect(await hub.connectionCount == 1)
    }
}
