/// What a collection's `events` property answers: the stream created with the
/// collection on the first read (while it is kept, see ``FirstEventStream``), and a new
/// subscription on every other read.
///
/// A stream has one consumer, so a second loop over the first stream would split the
/// events with the first loop; giving each later read its own subscription (registered
/// by `subscribe`, which starts it from the lists) keeps every loop whole.
struct EventStreams<Event: Sendable>: Sendable {
    let first: FirstEventStream<Event>
    /// Registers a new stream's continuation with the engine.
    let subscribe: @Sendable (AsyncStream<Event>.Continuation) async -> Void

    /// The first stream once, then a new subscription per call (registered in the
    /// background, because the `events` getter is synchronous).
    func next() -> AsyncStream<Event> {
        if let stream = first.take() { return stream }
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        let subscribe = subscribe
        Task { await subscribe(continuation) }
        return stream
    }
}
