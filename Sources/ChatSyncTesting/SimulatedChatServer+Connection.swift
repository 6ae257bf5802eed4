import ChatSync

// MARK: - Connection and real-time events

extension SimulatedChatServer {
    /// Drops (`false`) or restores (`true`) a user's connection. While offline their
    /// requests fail with a transient `network` error, they receive no real-time
    /// events, and their event streams report the change.
    public func setOnline(_ online: Bool, for userId: String) {
        let user = UserKey(userId)
        let wasOnline = !offlineUsers.contains(user)
        guard online != wasOnline else { return }
        if online { offlineUsers.remove(user) } else { offlineUsers.insert(user) }
        for (id, continuation) in subscribers[user] ?? [:] {
            deliver(.connectionChanged(online ? .online : .offline), to: continuation, subscription: id)
        }
    }

    /// Whether a user is connected.
    public func isOnline(_ userId: String) -> Bool { !offlineUsers.contains(UserKey(userId)) }

    func subscribe(_ userId: String) -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        let id = nextSubscriberId
        nextSubscriberId += 1
        subscribers[UserKey(userId), default: [:]][id] = continuation
        newestSubscription[UserKey(userId)] = id
        deliver(.connectionChanged(isOnline(userId) ? .online : .offline), to: continuation, subscription: id)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(userId, id) }
        }
        return stream
    }

    private func unsubscribe(_ userId: String, _ id: UInt64) {
        subscribers[UserKey(userId)]?[id] = nil
        enqueuedCounts[id] = nil
    }

    func broadcast(_ event: ServiceEvent, to users: [String]) {
        var event = event
        if !eventsCarryReqId {
            switch event {
            case .messageReceived(var message):
                message.reqId = ""
                event = .messageReceived(message)
            case .messageUpdated(var message):
                message.reqId = ""
                event = .messageUpdated(message)
            default: break
            }
        }
        for user in Set(users.map(UserKey.init)).sorted() where !offlineUsers.contains(user) {
            if case .messageReceived(let message) = event,
                echoesToLose.remove(EchoToLose(user: user, sender: UserKey(message.senderId), channelURL: message.channelURL)) != nil
            {
                continue
            }
            if heldEvents[user] != nil {
                heldEvents[user]?.append(event)
                continue
            }
            for (id, continuation) in subscribers[user] ?? [:] { deliver(event, to: continuation, subscription: id) }
        }
    }

    /// Loses the next real-time copy of a message `senderId` posts in `channelURL` on its
    /// way to `userId` (a push lost in transit): the server stores and answers the message,
    /// but that user never gets the event, and it is not counted as delivered.
    public func loseNextMessageEvent(from senderId: String, in channelURL: String, to userId: String) {
        echoesToLose.insert(EchoToLose(user: UserKey(userId), sender: UserKey(senderId), channelURL: channelURL))
    }

    /// Loses no more message events (those ``loseNextMessageEvent(from:in:to:)`` armed and
    /// that did not come).
    public func stopLosingMessageEvents() { echoesToLose = [] }

    /// Holds the real-time events meant for `userId` (a slow socket): they are delivered,
    /// in order, by ``releaseEvents(for:)``. Connection changes are not held.
    public func holdEvents(for userId: String) {
        if heldEvents[UserKey(userId)] == nil { heldEvents[UserKey(userId)] = [] }
    }

    /// Delivers the events held for `userId` and stops holding them.
    public func releaseEvents(for userId: String) {
        guard let held = heldEvents.removeValue(forKey: UserKey(userId)) else { return }
        for event in held { broadcast(event, to: [userId]) }
    }

    /// Whether real-time copies of new and edited messages carry their `reqId` (`true` at
    /// first). Many real backends echo a message without it; the sender's answer and
    /// look-ups by `reqId` still carry it.
    public func setEventsCarryReqId(_ carry: Bool) {
        eventsCarryReqId = carry
    }

    private func deliver(_ event: ServiceEvent, to continuation: AsyncStream<ServiceEvent>.Continuation, subscription: UInt64) {
        if case .enqueued = continuation.yield(event) { enqueuedCounts[subscription, default: 0] += 1 }
    }

    /// How many events the user's newest event subscription has been given, its first
    /// connection event included. A test compares it with what its client has handled
    /// to know that every real-time event has been applied.
    public func deliveredEventCount(for userId: String) -> Int {
        newestSubscription[UserKey(userId)].flatMap { enqueuedCounts[$0] } ?? 0
    }
}
