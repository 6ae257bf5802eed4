import Foundation

/// A value that threads share, read and written only under a pthread mutex (`NSLock`).
///
/// Used instead of the standard library's `Mutex` wherever two threads outside Swift's
/// concurrency (SQLite's writer, a dispatch queue) meet: on Linux, `Mutex` hands a
/// contended lock over through a futex in the kernel, an ordering the Thread Sanitizer
/// cannot see, so every contended access was reported as a race (the event inbox in
/// 7e7e1af, the checkpointer's state in the CI run of 8308aba). The Sanitizer intercepts
/// pthread mutexes, so it sees this lock's ordering and can still find a real race.
///
/// `@unchecked Sendable` is safe: `value` is private and only touched inside
/// ``withLock(_:)``, between `lock()` and `unlock()` of the one `NSLock`.
final class LockedState<State: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: State

    init(_ value: State) {
        self.value = value
    }

    /// Runs `body` on the value with the lock held; `body` must not take this lock again.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
