/// The messages of this device that synced lately, by request id, so that
/// `message(reqId:)` can answer even when no collection has cached them. The oldest
/// are forgotten past ``capacity``. Each copy follows what the service says of its
/// message later: a newer version replaces it (found by where the message lives, since
/// many services send edits without the request id), a deletion forgets it. Before, a
/// copy kept the text it synced with, and a message deleted since came back through
/// `message(reqId:)`.
struct RecentlySynced {
    static let capacity = 1_000

    private struct Address: Hashable {
        let channelURL: String
        let messageId: Int64

        init(_ message: Message) {
            channelURL = message.channelURL
            messageId = message.messageId
        }

        init(channelURL: String, messageId: Int64) {
            self.channelURL = channelURL
            self.messageId = messageId
        }
    }

    /// Each copy with the number it was remembered under.
    private var byReqId: [String: (message: Message, number: Int)] = [:]
    /// The request ids of the remembered messages, by where each lives.
    private var byAddress: [Address: Set<String>] = [:]
    /// Remembered (request id, number), oldest first; an item whose number is no longer
    /// its entry's (forgotten, or remembered again since) is skipped.
    private var order: [(reqId: String, number: Int)] = []
    private var numbers = 0

    subscript(reqId: String) -> Message? { byReqId[reqId]?.message }

    /// The request ids of the copies remembered in `channelURL`, in no order.
    func reqIds(in channelURL: String) -> [String] {
        byReqId.compactMap { $0.value.message.channelURL == channelURL ? $0.key : nil }
    }

    mutating func remember(_ message: Message) {
        if let earlier = byReqId[message.reqId] { unindex(earlier.message) }
        numbers += 1
        byReqId[message.reqId] = (message, numbers)
        byAddress[Address(message), default: []].insert(message.reqId)
        order.append((message.reqId, numbers))
        while byReqId.count > Self.capacity, !order.isEmpty {
            let oldest = order.removeFirst()
            guard let entry = byReqId[oldest.reqId], entry.number == oldest.number else { continue }
            byReqId[oldest.reqId] = nil
            unindex(entry.message)
        }
        // Stale items (forgotten entries) are dropped once they outnumber the live ones.
        if order.count > 2 * Self.capacity { order.removeAll { byReqId[$0.reqId]?.number != $0.number } }
    }

    /// The request id that remembering a message with `reqId` would forget to stay within
    /// ``capacity`` (the oldest copy), so that the store can forget the same one in the
    /// transaction that remembers the new copy: the file then holds what memory holds.
    func forgottenByRemembering(_ reqId: String) -> String? {
        guard byReqId[reqId] == nil, byReqId.count >= Self.capacity else { return nil }
        return order.first { byReqId[$0.reqId]?.number == $0.number }?.reqId
    }

    /// A newer version of a remembered message replaces its copy (an older one never
    /// does); its request id stays, whether the new version carries it or not.
    mutating func refresh(_ message: Message) {
        guard let reqIds = byAddress[Address(message)] else { return }
        for reqId in reqIds {
            guard let entry = byReqId[reqId], message.updatedAt >= entry.message.updatedAt else { continue }
            var copy = message
            copy.reqId = reqId
            byReqId[reqId] = (copy, entry.number)
        }
    }

    /// The service deleted these messages: their copies are forgotten.
    mutating func forget(channelURL: String, messageIds: some Sequence<Int64>) {
        for messageId in messageIds {
            guard let reqIds = byAddress.removeValue(forKey: Address(channelURL: channelURL, messageId: messageId)) else { continue }
            for reqId in reqIds { byReqId[reqId] = nil }
        }
    }

    /// The request id of the copy remembered at a place, if exactly one is.
    func reqId(channelURL: String, messageId: Int64) -> String? {
        guard let reqIds = byAddress[Address(channelURL: channelURL, messageId: messageId)], reqIds.count == 1 else { return nil }
        return reqIds.first
    }

    /// The channel's remembered copies whose keys lie in `range`, in no order (a scan of
    /// at most ``capacity`` copies).
    func copies(in channelURL: String, within range: KeyRange) -> [Message] {
        byReqId.values.compactMap { entry in
            entry.message.channelURL == channelURL && range.admits(entry.message.sortKey) ? entry.message : nil
        }
    }

    var isEmpty: Bool { byReqId.isEmpty }

    /// Whether a copy of a message at any of these places is remembered.
    func remembers(channelURL: String, messageIds: some Sequence<Int64>) -> Bool {
        messageIds.contains { byAddress[Address(channelURL: channelURL, messageId: $0)] != nil }
    }

    /// Whether `message` is newer than a remembered copy of it.
    func wouldRefresh(_ message: Message) -> Bool {
        byAddress[Address(message)]?.contains { (byReqId[$0]?.message.updatedAt ?? .max) <= message.updatedAt } ?? false
    }

    /// Forgets every copy of the channel's messages (its history can no longer be
    /// trusted, or the channel is gone), or of every channel with `nil`.
    mutating func forgetAll(in channelURL: String? = nil) {
        guard let channelURL else {
            self = RecentlySynced()
            return
        }
        for reqId in reqIds(in: channelURL) {
            if let entry = byReqId.removeValue(forKey: reqId) { unindex(entry.message) }
        }
    }

    private mutating func unindex(_ message: Message) {
        let address = Address(message)
        byAddress[address]?.remove(message.reqId)
        if byAddress[address]?.isEmpty == true { byAddress[address] = nil }
    }
}
