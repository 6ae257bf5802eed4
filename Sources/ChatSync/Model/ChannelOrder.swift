/// How a channel list is sorted.
///
/// ```swift
/// let query = ChannelListQuery(order: .channelNameAlphabetical)
/// ```
public enum ChannelOrder: String, Sendable, Hashable, Codable, CaseIterable {
    /// By `lastMessage?.createdAt ?? createdAt`, newest first.
    case latestLastMessage
    /// By `createdAt`, newest first.
    case chronological
    /// By name, ascending, comparing the names' UTF-8 bytes (as SQLite does, so the
    /// cache's pages and a list's order agree for every name).
    case channelNameAlphabetical
}

extension ChannelOrder {
    /// Whether `lhs` sorts before `rhs` in this order. Ties fall back to `channelURL`
    /// so every channel has one exact place.
    public func sortsBefore(_ lhs: Channel, _ rhs: Channel) -> Bool {
        switch self {
        case .latestLastMessage:
            let (l, r) = (lhs.lastActivityAt, rhs.lastActivityAt)
            return l != r ? l > r : lhs.channelURL.utf8.lexicographicallyPrecedes(rhs.channelURL.utf8)
        case .chronological:
            return lhs.createdAt != rhs.createdAt
                ? lhs.createdAt > rhs.createdAt : lhs.channelURL.utf8.lexicographicallyPrecedes(rhs.channelURL.utf8)
        case .channelNameAlphabetical:
            let (l, r) = (lhs.name.utf8, rhs.name.utf8)
            return l.elementsEqual(r) ? lhs.channelURL.utf8.lexicographicallyPrecedes(rhs.channelURL.utf8) : l.lexicographicallyPrecedes(r)
        }
    }
}
