/// Messages deleted on the service during this run, by channel and id (the newest
/// thousand). An answer to a resend can name a message the service stored earlier and
/// has deleted since (a repeated request id is the same message; Guarantees: Exactly once): no real-time
/// echo of it will ever come, and it must not be shown or cached.
struct DeletedLately {
    static let capacity = 1_000

    private struct Address: Hashable {
        let channelURL: String
        let messageId: Int64
    }

    private var addresses: Set<Address> = []
    private var order: [Address] = []

    func contains(channelURL: String, messageId: Int64) -> Bool {
        addresses.contains(Address(channelURL: channelURL, messageId: messageId))
    }

    mutating func remember(channelURL: String, messageIds: some Sequence<Int64>) {
        for id in messageIds where addresses.insert(Address(channelURL: channelURL, messageId: id)).inserted {
            order.append(Address(channelURL: channelURL, messageId: id))
        }
        if order.count > Self.capacity {
            let dropped = order.count - Self.capacity
            for address in order.prefix(dropped) { addresses.remove(address) }
            order.removeFirst(dropped)
        }
    }
}
