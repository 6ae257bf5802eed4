import Dispatch
import Foundation
import Testing

@testable import ChatSync

/// ``LockedState`` is the lock of every state that two threads may meet in (SQLite's
/// writer and the checkpoint thread, the service's reading loop and the engine). Two threads take it in turn, one now and then holding it long enough that the
/// other stops spinning and waits in the kernel: no update is lost, and under the Thread
/// Sanitizer (CI's second stage) that hand-over is one the Sanitizer follows. The same
/// test on `Synchronization.Mutex` draws five race reports from it on Linux, whose futex
/// hand-over it cannot see.
@Suite("LockedState")
struct LockedStateTests {
    @Test func twoThreadsContendingLoseNoUpdate() {
        let counter = LockedState((total: 0, byThread: [0, 0]))
        let turns = 2_000
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            for _ in 0..<turns {
                counter.withLock { state in
                    state.total += 1
                    state.byThread[thread] += 1
                    // Held for 50 µs every tenth turn, so that the waiter goes to sleep.
                    if state.total % 10 == 0 { usleep(50) }
                }
            }
        }
        let final = counter.withLock { $0 }
        #expect(final.total == 2 * turns)
        #expect(final.byThread == [turns, turns])
    }

    @Test func anErrorThrownInsideReleasesTheLock() {
        struct Refused: Error {}
        let state = LockedState(1)
        #expect(throws: Refused.self) {
            try state.withLock { value in
                value = 2
                throw Refused()
            }
        }
        // Taken again on the same thread: a lock still held would never return here.
        #expect(state.withLock { $0 } == 2)
    }
}
