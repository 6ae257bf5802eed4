import Synchronization

/// What a collection's `events` property answers: the stream created with the
/// collection on the first read, and a new subscription on every later read.
///
/// A stream has one consumer, so a second loop over the first stream would split the
/// events with the first loop; giving each later read its own subscription (registered
/// by `subscribe`, which starts it from the lists) keeps every loop whole.
final class EventStreams<Event: Sendable>: Sendable {
    /// The stream created with the collection, until it is first read.
    private let first: Mutex<AsyncStream<Event>?>
    /// Registers a new stream's continuation with the engine.
    private let subscribe: @Sendable (AsyncStream<Event>.Continuation) async -> Void

    init(first: AsyncStream<Event>, subscribe: @escaping @Sendable (AsyncStream<Event>.Continuation) async -> Void) {
        self.first = Mutex(first)
        self.subscribe = subscribe
    }

    /// The first stream once, then a new subscription per call (registered in the
    /// background, because the `events` getter is synchronous).
    func next() -> AsyncStream<Event> {
        if let stream = first.withLock({ $0.take() }) { return stream }
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let subscribe = subscribe
        Task { await subscribe(continuation) }
        return stream
    }
}
