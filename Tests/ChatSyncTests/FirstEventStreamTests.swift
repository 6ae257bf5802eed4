import Testing

@testable import ChatSync

/// The first event stream keeps what is emitted before the app reads it, in order, and
/// stays bounded while nobody does (the stream itself is made only on that read).
@Suite("First event stream")
struct FirstEventStreamTests {
    @Test func aLateReadGetsEverythingEmittedBeforeItThenWhatFollows() async throws {
        let first = FirstEventStream<Int>(unreadLimit: 10)
        for event in 1...3 { first.yield(event) }
        #expect(first.unreadCount == 3)
        let stream = try #require(first.take())
        #expect(first.take() == nil, "one read takes the stream")
        #expect(first.unreadCount == 0)
        first.yield(4)
        first.finish()
        first.yield(5)  // after the end: nowhere
        var events: [Int] = []
        for await event in stream { events.append(event) }
        #expect(events == [1, 2, 3, 4])
    }

    @Test func aStreamEndedBeforeItsReadStillHoldsWhatCameBefore() async throws {
        let first = FirstEventStream<Int>(unreadLimit: 10)
        first.yield(1)
        first.finish()
        first.yield(2)
        let stream = try #require(first.take())
        var events: [Int] = []
        for await event in stream { events.append(event) }
        #expect(events == [1])
    }

    @Test func anUnreadStreamPastItsLimitIsDroppedAndItsReadAnswersNothing() {
        let first = FirstEventStream<Int>(unreadLimit: 2)
        first.yield(1)
        first.yield(2)
        #expect(!first.wasDropped)
        first.yield(3)
        #expect(first.wasDropped)
        #expect(first.unreadCount == 0, "the held events went with it")
        first.yield(4)
        #expect(first.take() == nil, "the read answers a subscription instead (EventStreams)")
    }
}
