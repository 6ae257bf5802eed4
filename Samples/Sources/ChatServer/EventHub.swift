import ChatSync

/// The open WebSocket connections, by user, and the real-time events sent to them.
actor EventHub {
    private var connections: [UserKey: [Int: AsyncStream<ServiceEvent>.Continuation]] = [:]
    private var nextId = 0

    /// Registers a connection of `user`; answers its id and the events to send it.
    func connect(_ user: String) -> (Int, AsyncStream<ServiceEvent>) {
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        let id = nextId
        nextId += 1
        connections[UserKey(user), default: [:]][id] = continuation
        return (id, stream)
    }

    func disconnect(_ user: String, _ id: Int) {
        connections[UserKey(user)]?.removeValue(forKey: id)?.finish()
    }

    func send(_ event: ServiceEvent, to users: some Sequence<String>) {
        for user in Set(users.map(UserKey.init)) {
            for continuation in (connections[user] ?? [:]).values { continuation.yield(event) }
        }
    }

    /// Ends every connection, as a server that stops does.
    func closeAll() {
        for user in connections.values { for continuation in user.values { continuation.finish() } }
        connections.removeAll()
    }

    var connectionCount: Int { connections.values.reduce(0) { $0 + $1.count } }
}
