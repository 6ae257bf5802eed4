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
    /// By name, ascending.
    case channelNameAlphabetical
}

extension ChannelOrder {
    /// Whether `lhs` sorts before `rhs` in this order. Ties fall back to `channelURL`
    /// so every channel has one exact place.
    public func sortsBefore(_ lhs: Channel, _ rhs: Channel) -> Bool {
        switch self {
        case .latestLastMessage:
            let (l, r) = (lhs.lastActivityAt, rhs.lastActivityAt)
            return l != r ? l > r : lhs.channelURL < rhs.channelURL
        case .chronological:
            return lhs.createdAt != rhs.createdAt ? lhs.createdAt > rhs.createdAt : lhs.channelURL < rhs.channelURL
        case .channelNameAlphabetical:
            return lhs.name != rhs.name ? lhs.name < rhs.name : lhs.channelURL < rhs.channelURL
        }
    }
}
