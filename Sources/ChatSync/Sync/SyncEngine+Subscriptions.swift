// MARK: - Further consumers of a collection's events

extension SyncEngine {
    /// Subscribes to message view `id`: its current lists as insertions, then every event,
    /// taken in one step on the engine so nothing falls between them. Answers the
    /// subscription's token, or `nil` (its stream ended) when the view was removed.
    @discardableResult
    func subscribe(toView id: Int, _ subscriber: EventSubscriber<MessageCollectionEvent>) -> Int? {
        guard !isClosed, let view = views[id] else {
            subscriber.finish()
            return nil
        }
        var snapshot: [MessageCollectionEvent] = []
        if !view.succeeded.isEmpty { snapshot.append(.succeeded(.insert, Array(view.succeeded))) }
        if !view.pending.isEmpty { snapshot.append(.pending(.insert, view.pending)) }
        if !view.failed.isEmpty { snapshot.append(.failed(.insert, view.failed, .none)) }
        return view.outlet.subscribers.add(subscriber, startingWith: snapshot)
    }

    /// Resumes `reached` once subscription `token` of message view `id` has been read up to
    /// here (at once if it has ended).
    func mark(_ token: Int, ofView id: Int, _ reached: CheckedContinuation<Void, Never>) {
        guard let view = views[id] else { return reached.resume() }
        view.outlet.subscribers.mark(token, reached)
    }

    /// Ends subscription `token` of message view `id`.
    func unsubscribe(_ token: Int, fromView id: Int) {
        views[id]?.outlet.subscribers.remove(token)
    }

    /// Subscribes to channel view `id`: its current channels as an insertion, then every
    /// event. Answers the token, or `nil` (its stream ended) when the view was removed.
    @discardableResult
    func subscribe(toChannelView id: Int, _ subscriber: EventSubscriber<ChannelCollectionEvent>) -> Int? {
        guard !isClosed, let view = channelLists.views[id] else {
            subscriber.finish()
            return nil
        }
        let snapshot: [ChannelCollectionEvent] = view.channels.isEmpty ? [] : [.channels(.insert, view.channels)]
        return view.subscribers.add(subscriber, startingWith: snapshot)
    }

    /// Resumes `reached` once subscription `token` of channel view `id` has been read up to here.
    func mark(_ token: Int, ofChannelView id: Int, _ reached: CheckedContinuation<Void, Never>) {
        guard let view = channelLists.views[id] else { return reached.resume() }
        view.subscribers.mark(token, reached)
    }

    /// Ends subscription `token` of channel view `id`.
    func unsubscribe(_ token: Int, fromChannelView id: Int) {
        channelLists.views[id]?.subscribers.remove(token)
    }
}
