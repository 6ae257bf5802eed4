/// The messages of this device that synced lately, by request id, so that
/// `message(reqId:)` can answer even when no collection has cached them. The oldest
/// are forgotten past ``capacity``. Each copy follows what the service says of its
/// message later: an edit replaces it, a deletion forgets it (before, a copy kept the
/// text it synced with, and a message deleted since came back through `message(reqId:)`).
struct RecentlySynced {
    static let capacity = 1_000

    private struct Address: Hashable {
        let channelURL: String
        let messageId: Int64
    }

    private var byReqId: [String: Message] = [:]
    /// The request id of each remembered message, by where it lives.
    private var byAddress: [Address: String] = [:]
    private var order: [String] = []

    subscript(reqId: String) -> Message? { byReqId[reqId] }

    mutating func remember(_ message: Message) {
        if let earlier = byReqId.updateValue(message, forKey: message.reqId) {
            byAddress[Address(channelURL: earlier.channelURL, messageId: earlier.messageId)] = nil
        } else {
            order.append(message.reqId)
        }
        byAddress[Address(channelURL: message.channelURL, messageId: message.messageId)] = message.reqId
        guard order.count > Self.capacity, let oldest = byReqId.removeValue(forKey: order.removeFirst()) else { return }
        byAddress[Address(channelURL: oldest.channelURL, messageId: oldest.messageId)] = nil
    }

    /// A newer version of a remembered message replaces its copy (an older one never does).
    mutating func refresh(_ message: Message) {
        guard let held = byReqId[message.reqId], held.messageId == message.messageId, held.channelURL == message.channelURL,
            message.updatedAt >= held.updatedAt
        else { return }
        byReqId[message.reqId] = message
    }

    /// The service deleted these messages: their copies are forgotten.
    mutating func forget(channelURL: String, messageIds: some Sequence<Int64>) {
        for messageId in messageIds {
            guard let reqId = byAddress.removeValue(forKey: Address(channelURL: channelURL, messageId: messageId)) else { continue }
            byReqId[reqId] = nil
            // `order` keeps the id until it comes round: forgetting it there would cost a scan.
        }
    }
}
