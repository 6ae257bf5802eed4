/// Real-time events received from the service and not yet handled by the engine.
///
/// The loop that reads the service's stream puts each event here and moves on; the
/// engine takes them in batches, in one turn each. Handing every event to the engine
/// one by one cost two thread switches per event (onto the engine and back to the
/// reading loop), which bounded how many messages a second a busy channel could take
/// in; a burst now costs one switch per batch. Order is kept: one drain at a time takes
/// events in the order they were put.
///
/// The reading loop and the engine meet in ``LockedState``, a pthread mutex the Thread
/// Sanitizer can follow.
final class ServiceEventInbox: Sendable {
    private struct State {
        /// Events from `head` on are waiting; those before it were taken.
        var events: [ServiceEvent] = []
        var head = 0
        /// A drain is scheduled or running; the next put need not schedule one.
        var drainScheduled = false
    }

    private let state = LockedState(State())

    /// The most events one drain handles, so that a burst never holds the engine for long.
    static let batchLimit = 256

    /// Adds `event`; answers `true` when the caller must schedule a drain.
    func put(_ event: ServiceEvent) -> Bool {
        state.withLock { state in
            state.events.append(event)
            if state.drainScheduled { return false }
            state.drainScheduled = true
            return true
        }
    }

    /// How many events wait to be taken.
    var waitingCount: Int { state.withLock { $0.events.count - $0.head } }

    /// Takes the oldest events, at most ``batchLimit``; `more` says whether the drain must
    /// go on (otherwise the next put schedules one).
    func take() -> (events: [ServiceEvent], more: Bool) {
        state.withLock { state in
            // Moving a head, not removing from the front, keeps a long backlog linear.
            let end = min(state.events.count, state.head + Self.batchLimit)
            let batch = Array(state.events[state.head..<end])
            state.head = end
            let more = end < state.events.count
            if !more {
                state.events.removeAll(keepingCapacity: true)
                state.head = 0
                state.drainScheduled = false
            } else if state.head > 4_096, state.head * 2 > state.events.count {
                // A backlog that never empties: drop what was taken, once it is most of it.
                state.events.removeFirst(state.head)
                state.head = 0
            }
            return (batch, more)
        }
    }
}
