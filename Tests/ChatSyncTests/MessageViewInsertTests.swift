import Testing

@testable import ChatSync

/// What a view's insert makes of a page: the list stays ascending, each id once, and the
/// events say exactly what changed. A page of messages all new to the view takes a
/// shortcut (the page is shared, not copied); one that repeats an id or meets a held
/// message takes the careful path. Both must end in the same list and events.
@Suite("MessageView insert")
struct MessageViewInsertTests {
    private func makeView(capacity: Int = 1_000) -> (MessageView, FirstEventStream<MessageCollectionEvent>) {
        let events = FirstEventStream<MessageCollectionEvent>(unreadLimit: 1_000)
        let view = MessageView(
            id: 1, channelURL: "c", filter: MessageFilter(), viewpoint: .max, limit: 50, capacity: capacity,
            pendingWrites: PendingWrites(), events: events)
        return (view, events)
    }

    /// Every event emitted so far (the stream is ended first).
    private func allEvents(_ events: FirstEventStream<MessageCollectionEvent>) async -> [MessageCollectionEvent] {
        events.finish()
        var seen: [MessageCollectionEvent] = []
        guard let stream = events.take() else { return seen }
        for await event in stream { seen.append(event) }
        return seen
    }

    /// The succeeded list's events so far, each as its action and message ids.
    private func emitted(_ events: FirstEventStream<MessageCollectionEvent>) async -> [String] {
        await allEvents(events).compactMap { event in
            guard case .succeeded(let action, let messages) = event else { return nil }
            return "\(action) \(messages.map(\.messageId))"
        }
    }

    private func page(_ ids: [Int64]) -> [Message] { ids.map { makeMessage($0, at: $0 * 10) } }

    @Test func aFirstPageIsTheListAndTheInsertion() async {
        let (view, events) = makeView()
        #expect(view.insert(page([1, 2, 3]), growing: .previous) == 3)
        #expect(view.succeeded.map(\.messageId) == [1, 2, 3])
        #expect((1...3).allSatisfy { view.contains(messageId: $0) })
        #expect(view.lowerBound == MessageKey(createdAt: 10, messageId: 1))
        #expect(view.upperBound == MessageKey(createdAt: 30, messageId: 3))
        #expect(await emitted(events) == ["insert [1, 2, 3]"])
    }

    @Test func anUnsortedPageOfNewMessagesIsSorted() async {
        let (view, events) = makeView()
        view.insert(page([3, 1, 2]), growing: .previous)
        #expect(view.succeeded.map(\.messageId) == [1, 2, 3])
        #expect(await emitted(events) == ["insert [1, 2, 3]"])
    }

    @Test func olderAndNewerPagesJoinTheirEnds() async {
        let (view, events) = makeView()
        view.insert(page([4, 5]), growing: .previous)
        view.insert(page([2, 3]), growing: .previous)
        view.insert(page([6, 7]), growing: .next)
        #expect(view.succeeded.map(\.messageId) == [2, 3, 4, 5, 6, 7])
        #expect((2...7).allSatisfy { view.contains(messageId: $0) })
        #expect(await emitted(events) == ["insert [4, 5]", "insert [2, 3]", "insert [6, 7]"])
    }

    @Test func aPageRepeatingAnIdInsertsItOnce() async {
        let (view, events) = makeView()
        #expect(view.insert(page([1, 2, 2, 3]), growing: .previous) == 3)
        #expect(view.succeeded.map(\.messageId) == [1, 2, 3])
        #expect(await emitted(events) == ["insert [1, 2, 3]"])
    }

    @Test func aPageMeetingHeldMessagesUpdatesThemAndInsertsOnlyTheRest() async {
        let (view, events) = makeView()
        view.insert(page([2, 3]), growing: .previous)
        var edited = makeMessage(3, at: 30, text: "edited")
        edited.updatedAt = 99
        #expect(view.insert(page([1, 2]) + [edited] + page([4]), growing: .previous) == 2)
        #expect(view.succeeded.map(\.messageId) == [1, 2, 3, 4])
        #expect(view.succeeded.first { $0.messageId == 3 }?.text == "edited")
        #expect(await emitted(events) == ["insert [2, 3]", "update [3]", "insert [1, 4]"])
    }

    @Test func anEventKeepsThePageAsDeliveredWhenTheListChangesLater() async {
        let (view, events) = makeView()
        view.insert(page([1, 2]), growing: .previous)
        view.insert(page([3]), growing: .next)
        var edited = makeMessage(1, at: 10, text: "edited")
        edited.updatedAt = 99
        view.insert([edited], growing: .next)
        #expect(view.succeeded.map(\.text) == ["edited", "m2", "m3"])
        // The list and the first event shared the page: the later edit is the list's alone.
        let all = await allEvents(events)
        guard case .succeeded(.insert, let first)? = all.first else {
            Issue.record("the first event is \(String(describing: all.first))")
            return
        }
        #expect(first.map(\.text) == ["m1", "m2"])
        #expect(all.count == 3)
    }

    @Test func aPagePastCapacityTrimsTheFarEnd() async {
        let (view, events) = makeView(capacity: 3)
        view.insert(page([4, 5]), growing: .previous)
        view.insert(page([1, 2, 3]), growing: .previous)
        #expect(view.succeeded.map(\.messageId) == [1, 2, 3])
        #expect(!view.contains(messageId: 4) && !view.contains(messageId: 5))
        #expect(await emitted(events) == ["insert [4, 5]", "insert [1, 2, 3]", "remove [4, 5]"])
    }
}
