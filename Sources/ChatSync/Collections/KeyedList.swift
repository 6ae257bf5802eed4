/// Messages in arrival order, found by `reqId` in constant time: a channel may hold
/// thousands of pending messages after a long time offline.
struct KeyedList {
    private var order: [String] = []
    private var byReqId: [String: Message] = [:]

    enum Change { case inserted, updated, unchanged }

    var messages: [Message] { order.compactMap { byReqId[$0] } }

    func contains(_ reqId: String) -> Bool { byReqId[reqId] != nil }

    mutating func upsert(_ message: Message) -> Change {
        guard let old = byReqId.updateValue(message, forKey: message.reqId) else {
            order.append(message.reqId)
            return .inserted
        }
        return old == message ? .unchanged : .updated
    }

    mutating func remove(_ reqId: String) -> Message? {
        guard let message = byReqId.removeValue(forKey: reqId) else { return nil }
        if order.last == reqId { order.removeLast() } else if let index = order.firstIndex(of: reqId) { order.remove(at: index) }
        return message
    }
}
