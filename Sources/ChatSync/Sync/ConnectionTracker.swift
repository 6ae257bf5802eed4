/// Whether sync runs, how the service's connection stands, and the numbers that tell a
/// result or an event of the current connection from one of an older one.
struct ConnectionTracker {
    private(set) var isRunning = false
    private(set) var state: ConnectionState = .offline
    /// Bumped whenever the connection is lost or sync paused: a result obtained in an
    /// older epoch may be stored, but never taken as proof that the cache is live.
    private(set) var epoch = 0
    /// Bumped by every resume: an event still in the hands of an older subscription's
    /// loop is dropped rather than applied out of order.
    private(set) var subscription = 0
    /// Real-time events handled from the current subscription (tests wait on it).
    private(set) var handledEventCount = 0

    /// Sync starts with a new subscription, connecting; answers the subscription's number.
    mutating func start() -> Int {
        isRunning = true
        state = .connecting
        handledEventCount = 0
        subscription += 1
        return subscription
    }

    /// Sync stops (the connection is then lost, see ``lose(to:)``).
    mutating func stop() { isRunning = false }

    /// The real-time stream is broken (or sync paused): a new epoch begins.
    mutating func lose(to newState: ConnectionState) {
        state = newState
        epoch += 1
    }

    /// The real-time stream is up.
    mutating func comeOnline() { state = .online }

    /// An event of `subscription` arrived: answers whether it is the current one's (and
    /// counts it), or a late event of an older subscription, to be dropped.
    mutating func admit(eventOf subscription: Int) -> Bool {
        guard subscription == self.subscription else { return false }
        handledEventCount += 1
        return true
    }
}
