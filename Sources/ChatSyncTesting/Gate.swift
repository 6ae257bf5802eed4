/// Work held back until a test releases it.
struct Gate {
    /// One piece of held work, and when it was held (see ``hold(_:ticket:)``).
    struct Waiter {
        let ticket: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    var isHolding = false
    private(set) var waiting: [Waiter] = []

    /// Holds `continuation` until a release. `ticket` says when, for gates whose held work
    /// a test compares with another gate's (see `SimulatedChatServer.heldReadAnswerTickets`).
    mutating func hold(_ continuation: CheckedContinuation<Void, Never>, ticket: Int = 0) {
        waiting.append(Waiter(ticket: ticket, continuation: continuation))
    }

    mutating func release() {
        isHolding = false
        let released = waiting
        waiting.removeAll()
        for waiter in released { waiter.continuation.resume() }
    }

    /// Lets the waiter at `index` (in arrival order) go on alone and keeps holding the
    /// rest; answers whether there was one.
    mutating func releaseOne(at index: Int) -> Bool {
        guard waiting.indices.contains(index) else { return false }
        waiting.remove(at: index).continuation.resume()
        return true
    }
}
