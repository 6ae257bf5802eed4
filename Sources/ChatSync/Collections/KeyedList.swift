/// Messages ascending by `createdAt` (ties in the order they joined), found by `reqId`:
/// a channel may hold thousands of pending messages after a long time offline.
///
/// The order is kept whatever the order of arrival: a relaunch lists the outbox by row,
/// and an answer still waiting for its echo, listed by a view opened after it was
/// answered, carries the service's time. Messages usually arrive newest last, which
/// `insertInCreationOrder` appends without a search; a listed message is found by a
/// binary search on the time it was listed with.
struct KeyedList {
    private var ordered: [Message] = []
    private var byReqId: [String: Message] = [:]

    enum Change { case inserted, updated, unchanged }

    var messages: [Message] { ordered }

    func contains(_ reqId: String) -> Bool { byReqId[reqId] != nil }

    /// Adds `message`, or replaces the entry with its `reqId` where it is: an update
    /// keeps the `createdAt` the message joined with, so it never moves (API §3.3: update
    /// replaces by identity). An answer waiting for its echo carries the service's time,
    /// and would otherwise move in the views that listed it when it was sent.
    /// Answers the change and the message as listed.
    mutating func upsert(_ message: Message) -> (Change, Message) {
        guard let old = byReqId[message.reqId] else {
            byReqId[message.reqId] = message
            ordered.insertInCreationOrder(message)
            return (.inserted, message)
        }
        var listed = message
        listed.createdAt = old.createdAt
        byReqId[message.reqId] = listed
        ordered[position(of: old)] = listed
        return (old == listed ? .unchanged : .updated, listed)
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
        assert(ordered[index].reqId == message.reqId, "a listed message is where its time says")
        return index
    }
}
