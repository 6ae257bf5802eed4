/// Messages ascending by `createdAt` (ties in the order they joined), found by `reqId`:
/// a channel may hold thousands of pending messages after a long time offline.
///
/// The order is kept whatever the order of arrival: a resent message comes back after
/// newer ones, a relaunch lists the outbox by row, and an answer still waiting for its
/// echo carries the service's time. Messages usually arrive newest last, which
/// `insertInCreationOrder` appends without a search; a listed message is found by a
/// binary search on the time it was listed with.
struct KeyedList {
    private var ordered: [Message] = []
    private var byReqId: [String: Message] = [:]

    enum Change { case inserted, updated, unchanged }

    var messages: [Message] { ordered }

    func contains(_ reqId: String) -> Bool { byReqId[reqId] != nil }

    mutating func upsert(_ message: Message) -> Change {
        guard let old = byReqId.updateValue(message, forKey: message.reqId) else {
            ordered.insertInCreationOrder(message)
            return .inserted
        }
        ordered.replaceInCreationOrder(at: position(of: old), with: message)
        return old == message ? .unchanged : .updated
    }

    mutating func remove(_ reqId: String) -> Message? {
        guard let message = byReqId.removeValue(forKey: reqId) else { return nil }
        ordered.remove(at: position(of: message))
        return message
    }

    /// Where the listed `message` is (`byReqId` holds it, so it is there): among those
    /// created in the same millisecond.
    private func position(of message: Message) -> Int {
        var index = ordered.partitionPoint { $0.createdAt < message.createdAt }
        while index < ordered.count - 1, ordered[index].reqId != message.reqId { index += 1 }
        return index
    }
}
