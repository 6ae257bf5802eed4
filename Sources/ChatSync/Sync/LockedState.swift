import Foundation

/// A value that threads share, read and written only under a pthread mutex (`NSLock`).
///
/// Used instead of the standard library's `Mutex` wherever two threads may meet in a
/// lock (SQLite's writer and the checkpoint thread, the service's reading loop and the
/// engine, the engine and a collection's reader): on Linux, `Mutex` hands a contended
/// lock over through a futex in the kernel, an ordering the Thread Sanitizer cannot
/// see, so every contended access was reported as a race (the event inbox in 7e7e1af,
/// the checkpointer's state in the CI run of 8308aba). The Sanitizer intercepts pthread
/// mutexes, so it sees this lock's ordering and can still find a real race.
///
/// Not reentrant: `body` must not take the same lock again (it would wait for ever).
///
/// `@unchecked Sendable` is safe because of two facts the compiler cannot put together:
/// `value` is private and touched only inside ``withLock(_:)``, whose `body` runs
/// synchronously on the caller's thread and cannot escape, between `lock()` and
/// `unlock()` of the one `NSLock`; and `State` is `Sendable`, so a value handed in by
/// one thread and read out by another is safe to move between them.
final class LockedState<State: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: State

    init(_ value: State) {
        self.value = value
    }

    /// Runs `body` on the value with the lock held.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
