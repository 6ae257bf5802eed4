import Synchronization

/// The event stream created with a collection, until the app first reads `events`.
///
/// The stream buffers without limit, so that a slow consumer loses nothing. A stream
/// nobody reads would do that for ever: an app that only sets a handler, or only shows an
/// observable model, would keep every event of a long-lived screen in memory. So while
/// the stream is unread it holds at most ``unreadLimit`` events; at the next one it is
/// dropped, and the first read of `events` then answers a subscription that starts from
/// the lists, as every later read does (its replay gives the same lists).
///
/// Shared by the collection (which reads) and the engine (which yields); a `Mutex`
/// decides between a read and a drop that race.
final class FirstEventStream<Event: Sendable>: Sendable {
    private struct State {
        /// `nil` once read by the app, or dropped.
        var unread: AsyncStream<Event>?
        /// `nil` once dropped or finished.
        var continuation: AsyncStream<Event>.Continuation?
        var unreadCount = 0
        /// Dropped unread: the first read answered a subscription instead.
        var dropped = false
    }

    private let state: Mutex<State>
    /// The most events an unread stream holds before it is dropped.
    let unreadLimit: Int

    init(unreadLimit: Int) {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
        self.state = Mutex(State(unread: stream, continuation: continuation))
        self.unreadLimit = unreadLimit
    }

    /// The stream, on the app's first read of `events`; `nil` if it was read or dropped.
    func take() -> AsyncStream<Event>? { state.withLock { $0.unread.take() } }

    /// Sends `event`, or drops the stream if it is unread and full.
    func yield(_ event: Event) {
        state.withLock { state in
            guard let continuation = state.continuation else { return }
            if state.unread != nil {
                guard state.unreadCount < unreadLimit else {
                    state.unread = nil
                    state.continuation = nil
                    state.dropped = true
                    continuation.finish()
                    return
                }
                state.unreadCount += 1
            }
            continuation.yield(event)
        }
    }

    /// How many events the stream holds for a read that has not come (0 once read or dropped).
    var unreadCount: Int { state.withLock { $0.unread == nil ? 0 : $0.unreadCount } }

    /// Whether the stream was dropped before anyone read it.
    var wasDropped: Bool { state.withLock { $0.dropped } }

    /// Ends the stream; no event follows.
    func finish() {
        state.withLock { state in
            state.continuation?.finish()
            state.continuation = nil
        }
    }
}
