/// One hold that a test double arms, places on the next call that qualifies, and
/// releases: the mechanics shared by the doubles that keep a request or an answer waiting.
struct OneShotHold {
    private var armed = false
    private var held: CheckedContinuation<Void, Never>?

    /// Holds the next qualifying call.
    mutating func arm() { armed = true }
    /// A call waits.
    var isHolding: Bool { held != nil }

    /// Whether this call is the one to hold; disarms.
    mutating func takesThisCall() -> Bool {
        defer { armed = false }
        return armed
    }

    /// Keeps the call waiting on `continuation` until ``release()``.
    mutating func keep(_ continuation: CheckedContinuation<Void, Never>) { held = continuation }

    /// Lets the held call go on, and disarms.
    mutating func release() {
        armed = false
        held?.resume()
        held = nil
    }
}
