import ChatSyncTesting
import Testing

@testable import ChatSync

extension ModelSubject {
    /// Fetches as an app would and checks API.md §3.1 on the way: the call returns once
    /// `limit` messages were delivered or the direction is exhausted.
    ///
    /// A fetch that answers `hasMore` after fewer stopped at the end of what it could
    /// reach (offline, the cache), so fetching again at once, with nothing else between,
    /// delivers nothing more. Pass `mayFallShort` when a transient fault may have cut
    /// the first fetch off. (A page read full of messages whose deletion is queued broke
    /// it: the fetch counted the hidden rows, stopped, and showed fewer, even none.)
    func fetchCheckingPageSize(
        _ direction: Direction, mayFallShort: Bool = false, context: @autoclosure () -> String
    )
        async throws -> Bool
    {
        let before = recorder.events.count
        let hasMore = try await collection.fetchSucceededMessages(direction)
        let delivered = insertedMessages(since: before)
        // A view cleared under the fetch (the channel's cached history dropped for an
        // expired change-log token) ends it: the `.clear` tells the app to start over.
        guard hasMore, !mayFallShort, delivered < collection.limit, !wasCleared(since: before) else { return hasMore }
        // Only what lies beyond the view's edge counts: background work (a catch-up, live
        // messages, a fresh view's newest page) may insert elsewhere meanwhile.
        let shown = await collection.succeededMessages
        let again = recorder.events.count
        let hasMoreAgain = try await collection.fetchSucceededMessages(direction)
        let more = insertedMessages(since: again) { message in
            switch direction {
            case .previous: shown.first.map { message.sortKey < $0.sortKey } ?? true
            case .next: shown.last.map { message.sortKey > $0.sortKey } ?? true
            }
        }
        #expect(
            more == 0,
            "a \(direction) fetch answered hasMore after \(delivered) of \(collection.limit) though \(more) more were there: \(context())")
        return hasMoreAgain
    }

    private func wasCleared(since index: Int) -> Bool {
        recorder.events.dropFirst(index).contains { $0 == .succeeded(.clear, []) }
    }

    /// How many messages (of those `counted`) insert events added since event `index`.
    private func insertedMessages(since index: Int, counted: (Message) -> Bool = { _ in true }) -> Int {
        recorder.events.dropFirst(index).reduce(0) { count, event in
            if case .succeeded(.insert, let messages) = event { count + messages.count(where: counted) } else { count }
        }
    }
}
