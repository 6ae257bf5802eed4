/// What a subscription's stream carries: a collection's events, and markers put between
/// them on request, so that a consumer can tell when it has applied everything emitted
/// before a point (an observable model's `catchUp()`).
enum SubscriptionItem<Event: Sendable>: Sendable {
    case event(Event)
    /// Resumed by the consumer when it reads the marker.
    case marker(CheckedContinuation<Void, Never>)
}

/// One extra consumer of a collection's events.
enum EventSubscriber<Event: Sendable>: Sendable {
    /// A second (third, …) `events` stream.
    case events(AsyncStream<Event>.Continuation)
    /// An observable model's stream, which also carries markers.
    case items(AsyncStream<SubscriptionItem<Event>>.Continuation)

    /// Sends `event`; answers `false` once the consumer has gone.
    func yield(_ event: Event) -> Bool {
        switch self {
        case .events(let continuation):
            if case .terminated = continuation.yield(event) { return false }
        case .items(let continuation):
            if case .terminated = continuation.yield(.event(event)) { return false }
        }
        return true
    }

    func finish() {
        switch self {
        case .events(let continuation): continuation.finish()
        case .items(let continuation): continuation.finish()
        }
    }
}

/// The consumers of a collection's events beyond its first `events` stream.
///
/// The first stream is created with the collection and holds every event since. A stream
/// must have one consumer (two loops over one stream would split its events between
/// them), so every further consumer gets a subscription of its own instead: it starts
/// with the collection's current lists as insertions and then gets every event, so that
/// replaying it gives the lists too. Engine-isolated, like the view it belongs to.
final class EventSubscribers<Event: Sendable> {
    private var subscribers: [Int: EventSubscriber<Event>] = [:]
    private var nextToken = 0

    /// How many there are (for tests).
    var count: Int { subscribers.count }

    /// Adds `subscriber`, first sending it `snapshot` (the current lists as insertions);
    /// answers its token.
    func add(_ subscriber: EventSubscriber<Event>, startingWith snapshot: [Event]) -> Int {
        let token = nextToken
        nextToken += 1
        subscribers[token] = subscriber
        for event in snapshot { yield(event, to: token) }
        return token
    }

    /// Sends `event` to every subscriber, dropping those whose consumer has gone.
    func yield(_ event: Event) {
        guard !subscribers.isEmpty else { return }
        for token in Array(subscribers.keys) { yield(event, to: token) }
    }

    private func yield(_ event: Event, to token: Int) {
        if subscribers[token]?.yield(event) == false { subscribers[token] = nil }
    }

    /// Puts a marker in subscriber `token`'s stream after everything sent so far; resumes
    /// `reached` at once when there is no such stream to carry it.
    func mark(_ token: Int, _ reached: CheckedContinuation<Void, Never>) {
        guard case .items(let continuation) = subscribers[token], case .enqueued = continuation.yield(.marker(reached))
        else { return reached.resume() }
    }

    /// Ends subscriber `token`'s stream.
    func remove(_ token: Int) {
        subscribers.removeValue(forKey: token)?.finish()
    }

    /// Ends every subscriber's stream (the collection was removed or the manager closed).
    func finishAll() {
        let ending = subscribers.values
        subscribers.removeAll()
        for subscriber in ending { subscriber.finish() }
    }
}
