/// An observable model's subscription to its collection's events (see `EventSubscribers`):
/// registered in the background at once, read on the main actor, with markers to wait
/// for (`catchUp()`).
struct ModelSubscription<Event: Sendable>: Sendable {
    private let items: AsyncStream<SubscriptionItem<Event>>
    /// The token, once the engine registered it (`nil`: the collection was already removed).
    private let token: Task<Int?, Never>
    private let mark: @Sendable (Int, CheckedContinuation<Void, Never>) async -> Void
    private let unsubscribe: @Sendable (Int) async -> Void

    /// - Parameters:
    ///   - subscribe: registers a subscriber with the engine and answers its token.
    ///   - mark: puts a marker in that subscriber's stream.
    ///   - unsubscribe: ends that subscriber's stream.
    init(
        subscribe: @escaping @Sendable (EventSubscriber<Event>) async -> Int?,
        mark: @escaping @Sendable (Int, CheckedContinuation<Void, Never>) async -> Void,
        unsubscribe: @escaping @Sendable (Int) async -> Void
    ) {
        let (items, continuation) = AsyncStream<SubscriptionItem<Event>>.makeStream(bufferingPolicy: .unbounded)
        self.items = items
        token = Task { await subscribe(.items(continuation)) }
        (self.mark, self.unsubscribe) = (mark, unsubscribe)
    }

    /// Applies every event until the stream ends (the collection was removed, or the model
    /// went away and ended it), answering every marker, even once nothing is applied.
    @MainActor
    func read(_ apply: (Event) -> Void) async {
        for await item in items {
            switch item {
            case .event(let event): apply(event)
            case .marker(let reached): reached.resume()
            }
        }
    }

    /// Returns once ``read(_:)`` has applied everything the collection emitted before this call.
    func catchUp() async {
        guard let token = await token.value else { return }
        let mark = mark
        await withCheckedContinuation { reached in
            Task { await mark(token, reached) }
        }
    }

    /// Ends the subscription, in the background (a model's `deinit` cannot wait).
    func end() {
        let (token, unsubscribe) = (token, unsubscribe)
        Task {
            guard let token = await token.value else { return }
            await unsubscribe(token)
        }
    }
}
