/// One page of channels.
public struct ChannelPage: Sendable, Hashable, Codable {
    /// The channels, in the query's order.
    public var channels: [Channel]
    /// The cursor of the next page; `nil` at the end.
    public var nextCursor: String?
    /// `true` when another page follows.
    public var hasMore: Bool { nextCursor != nil }

    /// Creates a page.
    public init(channels: [Channel], nextCursor: String?) {
        self.channels = channels
        self.nextCursor = nextCursor
    }
}
