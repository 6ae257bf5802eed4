/// The streams of ``SyncManager/observeMessage(reqId:)``, by request id.
struct MessageObservers {
    private var streams: [String: [Int: AsyncStream<Message>.Continuation]] = [:]
    private var nextId = 0

    mutating func add(_ reqId: String, _ continuation: AsyncStream<Message>.Continuation) -> Int {
        let id = nextId
        nextId += 1
        streams[reqId, default: [:]][id] = continuation
        return id
    }

    mutating func remove(_ reqId: String, id: Int) {
        streams[reqId]?[id] = nil
        if streams[reqId]?.isEmpty == true { streams[reqId] = nil }
    }

    /// Sends the message's new state; a synced message ends the streams.
    mutating func publish(_ message: Message) {
        guard let observers = streams[message.reqId] else { return }
        for continuation in observers.values {
            continuation.yield(message)
            if message.syncState == .synced { continuation.finish() }
        }
        if message.syncState == .synced { streams[message.reqId] = nil }
    }

    /// Ends the streams of a message that left the outbox without being synced.
    mutating func finish(_ reqId: String) {
        for continuation in streams.removeValue(forKey: reqId)?.values ?? [:].values { continuation.finish() }
    }

    mutating func finishAll() {
        for observers in streams.values { for continuation in observers.values { continuation.finish() } }
        streams.removeAll()
    }
}
