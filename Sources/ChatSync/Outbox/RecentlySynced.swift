/// The messages of this device that synced lately, by request id, so that
/// `message(reqId:)` can answer even when no collection has cached them. The oldest
/// are forgotten past ``capacity``.
struct RecentlySynced {
    static let capacity = 1_000

    private var byReqId: [String: Message] = [:]
    private var order: [String] = []

    subscript(reqId: String) -> Message? { byReqId[reqId] }

    mutating func remember(_ message: Message) {
        if byReqId.updateValue(message, forKey: message.reqId) == nil { order.append(message.reqId) }
        if order.count > Self.capacity { byReqId[order.removeFirst()] = nil }
    }
}
