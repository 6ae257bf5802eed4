/// Work held back until a test releases it.
struct Gate {
    var isHolding = false
    var waiting: [CheckedContinuation<Void, Never>] = []

    mutating func release() {
        isHolding = false
        let released = waiting
        waiting.removeAll()
        for continuation in released { continuation.resume() }
    }
}
