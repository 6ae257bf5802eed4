import Synchronization

/// A clock for tests on which every wait ends at once while its virtual time moves on.
///
/// Use it as `SyncManagerOptions.clock` so that retries and resend delays happen
/// without real time passing:
///
/// ```swift
/// var options = SyncManagerOptions()
/// options.clock = InstantClock()
/// ```
///
/// Unlike a clock that yields through low-priority helper tasks, a sleep here yields
/// once on the caller's own task, so it cannot be starved when the machine is busy.
public final class InstantClock: Clock, Sendable {
    /// A point of the clock's virtual time.
    public struct Instant: InstantProtocol, Hashable {
        /// Virtual time since the clock was created.
        public var offset: Duration

        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }

        /// The virtual time from this instant to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }

        /// Orders instants by offset.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// Virtual time in nanoseconds. An atomic rather than a `Mutex`: ThreadSanitizer
    /// cannot see the `Mutex`'s futex on Linux and reported its guarded accesses as races.
    private let nanoseconds = Atomic<Int64>(0)

    /// Creates a clock at virtual time zero.
    public init() {}

    /// The current virtual time: the latest deadline slept until (to the nanosecond).
    public var now: Instant { Instant(offset: .nanoseconds(nanoseconds.load(ordering: .acquiring))) }

    /// Any duration can be slept.
    public var minimumResolution: Duration { .zero }

    /// Moves virtual time to `deadline` and returns after one yield.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let (seconds, attoseconds) = deadline.offset.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let target = overflow ? Int64.max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
        var current = nanoseconds.load(ordering: .acquiring)
        while current < target {
            let (exchanged, original) = nanoseconds.compareExchange(
                expected: current, desired: target, ordering: .acquiringAndReleasing)
            if exchanged { break }
            current = original
        }
        await Task.yield()
    }
}
