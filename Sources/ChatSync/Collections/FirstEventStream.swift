/// The event stream created with a collection, until the app first reads `events`.
///
/// The stream buffers without limit, so that a slow consumer loses nothing. A stream
/// nobody reads would do that for ever: an app that only sets a handler, or only shows an
/// observable model, would keep every event of a long-lived screen in memory. So while
/// the stream is unread it holds at most ``unreadLimit`` events; at the next one it is
/// dropped, and the first read of `events` then answers a subscription that starts from
/// the lists, as every later read does (its replay gives the same lists).
///
/// Until that read the events wait in a plain array, and the stream is made only when
/// the app asks for it: an `AsyncStream` costs an allocation or three to make and a lock,
/// a buffer append and a dozen run-time type look-ups per event (its code is not
/// specialized for our event types): 18 µs of a 300 µs first page on the build VM, for
/// a stream that an app which only sets a handler never reads at all.
///
/// Shared by the collection (which reads) and the engine (which yields); a lock
/// (``LockedState``) decides between a read and a yield or drop that race.
final class FirstEventStream<Event: Sendable>: Sendable {
    private struct State {
        /// What was emitted while nobody read the stream; `nil` once read, or dropped.
        var unread: [Event]? = []
        /// The stream's continuation once read; `nil` before and once finished.
        var continuation: AsyncStream<Event>.Continuation?
        var finished = false
        /// Dropped unread: the first read answered a subscription instead.
        var dropped = false
    }

    private let state = LockedState(State())
    /// The most events an unread stream holds before it is dropped.
    let unreadLimit: Int

    init(unreadLimit: Int) {
        self.unreadLimit = unreadLimit
    }

    /// The stream, on the app's first read of `events`, holding everything emitted so
    /// far; `nil` if it was read or dropped.
    func take() -> AsyncStream<Event>? {
        state.withLock { state in
            guard let unread = state.unread else { return nil }
            state.unread = nil
            let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .unbounded)
            for event in unread { continuation.yield(event) }
            if state.finished { continuation.finish() } else { state.continuation = continuation }
            return stream
        }
    }

    /// Sends `event`, or drops the stream if it is unread and full.
    func yield(_ event: Event) {
        state.withLock { state in
            guard !state.finished else { return }
            guard state.unread != nil else {
                state.continuation?.yield(event)
                return
            }
            guard state.unread!.count < unreadLimit else {
                state.unread = nil
                state.dropped = true
                return
            }
            state.unread!.append(event)
        }
    }

    /// How many events the stream holds for a read that has not come (0 once read or dropped).
    var unreadCount: Int { state.withLock { $0.unread?.count ?? 0 } }

    /// Whether the stream was dropped before anyone read it.
    var wasDropped: Bool { state.withLock { $0.dropped } }

    /// Ends the stream; no event follows. A stream read later still holds what came before.
    func finish() {
        state.withLock { state in
            state.finished = true
            state.continuation?.finish()
            state.continuation = nil
        }
    }
}
