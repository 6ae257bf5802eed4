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

    /// Lets the waiter at `index` (in arrival order) go on alone and keeps holding the
    /// rest; answers whether there was one.
    mutating func releaseOne(at index: Int) -> Bool {
        guard waiting.indices.contains(index) else { return false }
        waiting.remove(at: index).resume()
        return true
    }
}
