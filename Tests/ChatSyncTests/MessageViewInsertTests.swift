import Testing

@testable import ChatSync

/// What a view's insert makes of a page: the list stays ascending, each id once, and the
/// events say exactly what changed. A page of messages all new to the view takes a
/// shortcut (the page is shared, not copied); one that repeats an id or meets a held
/// message takes the careful path. Both must end in the same list and events.
@Suite("MessageView insert")
struct MessageViewInsertTests {
    private func makeView(
        capacity: Int = 1_000, pendingWrites: PendingWrites = PendingWrites()
    ) -> (MessageView, FirstEventStream<MessageCollectionEvent>) {
        let events = FirstEventStream<MessageCollectionEvent>(unreadLimit: 1_000)
        let view = MessageView(
            id: 1, channelURL: "c", filter: MessageFilter(), viewpoint: .max, limit: 50, capacity: capacity,
            pendingWrites: pendingWrites, events: events)
        return (view, events)
    }

    /// The user's queued writes: an edit of each id in `edits` (to "queued edit") and a
    /// deletion of each id in `deletions`.
    private func queued(edits: [Int64] = [], deletions: [Int64] = []) -> PendingWrites {
        let writes = PendingWrites()
        let operations =
            edits.map { OutboxOperation(id: "edit-\($0)", kind: .edit, channelURL: "c", messageId: $0, text: "queued edit") }
            + deletions.map { OutboxOperation(id: "delete-\($0)", kind: .deletion, channelURL: "c", messageId: $0) }
        for (seq, operation) in operations.enumerated() { writes.add(QueuedOperation(operation: operation, seq: Int64(seq), attempts: 0)) }
        return writes
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

    @Test func aQueuedEditShowsInThePageAndItsEvent() async {
        let (view, events) = makeView(pendingWrites: queued(edits: [2]))
        #expect(view.insert(page([1, 2, 3]), growing: .previous) == 3)
        #expect(view.succeeded.map(\.text) == ["m1", "queued edit", "m3"])
        #expect(view.succeeded.map(\.isEditPending) == [false, true, false])
        let all = await allEvents(events)
        guard case .succeeded(.insert, let inserted)? = all.first else {
            Issue.record("the first event is \(String(describing: all.first))")
            return
        }
        #expect(inserted.map(\.text) == ["m1", "queued edit", "m3"])
    }

    @Test func aQueuedDeletionStaysOutButTheViewCoversItsPlace() async {
        let (view, events) = makeView(pendingWrites: queued(deletions: [1, 3]))
        #expect(view.insert(page([1, 2, 3]), growing: .previous) == 1)
        #expect(view.succeeded.map(\.messageId) == [2])
        #expect(!view.contains(messageId: 1) && !view.contains(messageId: 3))
        // The next fetch reads past the deleted messages instead of serving them again.
        #expect(view.lowerBound == MessageKey(createdAt: 10, messageId: 1))
        #expect(view.upperBound == MessageKey(createdAt: 30, messageId: 3))
        #expect(await emitted(events) == ["insert [2]"])
    }

    @Test func aPageOfOnlyQueuedDeletionsInsertsNothingButMovesTheBounds() async {
        let (view, events) = makeView(pendingWrites: queued(deletions: [1, 2]))
        #expect(view.insert(page([1, 2]), growing: .previous) == 0)
        #expect(view.succeeded.isEmpty)
        #expect(view.lowerBound == MessageKey(createdAt: 10, messageId: 1))
        #expect(view.upperBound == MessageKey(createdAt: 20, messageId: 2))
        #expect(await emitted(events).isEmpty)
    }

    @Test func aMessageAServiceMovedInTimeTakesItsNewPlaceOnce() async {
        let (view, events) = makeView()
        view.insert(page([1, 2, 3]), growing: .previous)
        let moved = makeMessage(2, at: 35, text: "moved")
        #expect(view.insert([moved], growing: .next) == 1)
        #expect(view.succeeded.map(\.messageId) == [1, 3, 2])
        #expect(view.succeeded.last?.text == "moved")
        #expect(view.contains(messageId: 2))
        #expect(await emitted(events) == ["insert [1, 2, 3]", "remove [2]", "insert [2]"])
    }

    /// As the store does (its upsert never takes an older version) and as a service page
    /// is cleaned (`SyncEngine.sanitized`): the newest copy wins, and of equal ones the later.
    @Test func aPageRepeatingAnIdWithDifferentContentKeepsTheNewestCopy() async {
        let (view, events) = makeView()
        var older = makeMessage(2, at: 20, text: "first version")
        older.updatedAt = 5
        var newer = makeMessage(2, at: 20, text: "second version")
        newer.updatedAt = 9
        #expect(view.insert(page([1]) + [older, newer] + page([3]), growing: .previous) == 3)
        #expect(view.succeeded.map(\.text) == ["m1", "second version", "m3"])
        view.insert([older, newer], growing: .next)
        #expect(view.succeeded.map(\.text) == ["m1", "second version", "m3"])
        var tie = makeMessage(2, at: 20, text: "same time, later in the page")
        tie.updatedAt = 9
        view.insert([newer, tie], growing: .next)
        #expect(view.succeeded.map(\.text) == ["m1", "same time, later in the page", "m3"])
        #expect(await emitted(events) == ["insert [1, 2, 3]", "update [2]"])
    }

    @Test func aFirstPageLargerThanCapacityKeepsTheEndItGrewTowards() async {
        let (older, olderEvents) = makeView(capacity: 2)
        #expect(older.insert(page([1, 2, 3, 4]), growing: .previous) == 4)
        #expect(older.succeeded.map(\.messageId) == [1, 2])
        #expect(older.upperBound == MessageKey(createdAt: 20, messageId: 2))
        #expect(await emitted(olderEvents) == ["insert [1, 2, 3, 4]", "remove [3, 4]"])
        let (newer, newerEvents) = makeView(capacity: 2)
        newer.insert(page([1, 2, 3, 4]), growing: .next)
        #expect(newer.succeeded.map(\.messageId) == [3, 4])
        #expect(newer.lowerBound == MessageKey(createdAt: 30, messageId: 3))
        #expect(!newer.contains(messageId: 1) && newer.contains(messageId: 4))
        #expect(await emitted(newerEvents) == ["insert [1, 2, 3, 4]", "remove [1, 2]"])
    }
}
