/// Messages ascending by `createdAt` (ties in the order they joined), found by `reqId`:
/// a channel may hold thousands of pending messages after a long time offline.
///
/// The order is kept whatever the order of arrival: a relaunch lists the outbox by row,
/// a failed message resent goes back in it after newer ones, and a view opened later
/// lists answers still waiting for their echo before the outbox. Messages usually arrive newest last, which
/// `insertInCreationOrder` appends without a search; a listed message is found by a
/// binary search on the time it was listed with.
struct KeyedList {
    private var ordered: [Message] = []
    /// The `createdAt` each message was listed with: where to search for it.
    private var listedAt: [String: Int64] = [:]

    enum Change { case inserted, updated, unchanged }

    var messages: [Message] { ordered }

    func contains(_ reqId: String) -> Bool { listedAt[reqId] != nil }

    /// Adds `message`, or replaces the entry with its `reqId` where it is: an update
    /// keeps the `createdAt` the message joined with, so it never moves (API §3.3: update
    /// replaces by identity), whatever time a newer version carries (an edit's answer
    /// carries the service's). Answers the change and the message as listed.
    mutating func upsert(_ message: Message) -> (Change, Message) {
        guard let createdAt = listedAt[message.reqId] else {
            listedAt[message.reqId] = message.createdAt
            ordered.insertInCreationOrder(message)
            return (.inserted, message)
        }
        let index = position(of: message.reqId, listedAt: createdAt)
        var listed = message
        listed.createdAt = createdAt
        let change: Change = ordered[index] == listed ? .unchanged : .updated
        ordered[index] = listed
        return (change, listed)
    }

    mutating func remove(_ reqId: String) -> Message? {
        guard let createdAt = listedAt.removeValue(forKey: reqId) else { return nil }
        return ordered.remove(at: position(of: reqId, listedAt: createdAt))
    }

    /// Where the listed message is (`listedAt` holds it, so it is there): among those
    /// created in the same millisecond.
    private func position(of reqId: String, listedAt createdAt: Int64) -> Int {
        var index = ordered.partitionPoint { $0.createdAt < createdAt }
        while index < ordered.count - 1, ordered[index].reqId != reqId { index += 1 }
        assert(ordered[index].reqId == reqId, "a listed message is where its time says")
        return index
    }
}
