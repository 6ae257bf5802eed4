/// Where a collection's events go: its first `events` stream, its further subscriptions
/// and, when set, its handler.
///
/// Background work may emit between the collection's creation and `setHandler`, and an
/// app cannot close that window itself, so what was emitted before a handler was first
/// set is kept for that handler until the app first asks the view for anything (then it
/// has chosen `events`, or set its handler already). Engine-isolated, like its view.
final class CollectionEventOutlet {
    /// The stream created with the collection.
    let first: FirstEventStream<MessageCollectionEvent>
    private var handler: (any MessageCollectionHandler)?
    /// Kept for the first handler; `nil` once given away or given up.
    private var earlyEvents: [MessageCollectionEvent]? = []
    /// The most events kept for a late handler: a view nobody fetches or handles does not
    /// grow this list for ever (the stream keeps everything regardless).
    static let earlyEventLimit = 1_000
    /// The public handle, for handler callbacks; weak so a dropped collection can go away.
    weak var collection: MessageCollection?
    /// Further `events` streams and observable models.
    let subscribers = EventSubscribers<MessageCollectionEvent>()

    init(first: FirstEventStream<MessageCollectionEvent>) {
        self.first = first
    }

    /// Sets the handler. The first one set before the app asked the view for anything is
    /// first sent every event emitted so far, so it sees what `events` sees.
    func setHandler(_ handler: (any MessageCollectionHandler)?) {
        self.handler = handler
        guard let handler else { return }  // clearing a handler that never was keeps them
        if let collection, let earlyEvents {
            for event in earlyEvents { event.deliver(to: handler, from: collection) }
        }
        earlyEvents = nil
    }

    /// The app fetched or read a list: what was emitted so far is in what it read, so a
    /// handler set from now on gets only what follows (it would show the rest twice).
    func appActed() {
        earlyEvents = nil
    }

    /// Sends an event to the streams and the handler, in that order.
    func emit(_ event: MessageCollectionEvent) {
        first.yield(event)
        subscribers.yield(event)
        if let handler, let collection {
            event.deliver(to: handler, from: collection)
        } else if let kept = earlyEvents?.count {
            if kept < Self.earlyEventLimit { earlyEvents?.append(event) } else { earlyEvents = nil }
        }
    }

    /// Ends the event streams; no event follows.
    func finish() {
        handler = nil
        earlyEvents = nil
        first.finish()
        subscribers.finishAll()
    }
}
