// Who a message or a channel belongs to, as services tell users apart: by the bytes of
// their ids. Swift's `==` takes canonically equivalent ids ("zo\u{EB}" with a precomposed
// ë, "zoe\u{308}" with a combining diaeresis) for one; a service, like the cache's SQL,
// takes them for two users. The engine decides what is the user's own through these, and
// a service (the simulator, the reference server) checks rights through them.

extension Message {
    /// Whether `userId` sent this message, comparing the ids byte for byte as services
    /// do: a message of another user whose id only spells alike is not the user's.
    public func isSent(by userId: String) -> Bool { senderId.hasSameBytes(as: userId) }
}

extension Channel {
    /// Whether `userId` is a member, comparing the ids byte for byte as services do.
    public func hasMember(_ userId: String) -> Bool { memberIds.contains { $0.hasSameBytes(as: userId) } }
}
