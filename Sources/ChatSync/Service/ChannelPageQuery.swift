/// A request for one page of the user's channels.
///
/// ```swift
/// var query = ChannelPageQuery(order: .latestLastMessage, limit: 20)
/// let first = try await service.fetchChannels(query)
/// query.cursor = first.nextCursor
/// ```
public struct ChannelPageQuery: Sendable, Hashable, Codable {
    /// The sort order.
    public var order: ChannelOrder
    /// Whether channels without messages are included.
    public var includeEmpty: Bool
    /// Only channels of these custom types; `nil` for all.
    public var customTypes: Set<String>?
    /// The most channels to answer.
    public var limit: Int
    /// Where the previous page ended; `nil` for the first page.
    public var cursor: String?

    /// Creates a query.
    public init(
        order: ChannelOrder = .latestLastMessage, includeEmpty: Bool = true,
        customTypes: Set<String>? = nil, limit: Int = 20, cursor: String? = nil
    ) {
        self.order = order
        self.includeEmpty = includeEmpty
        self.customTypes = customTypes
        self.limit = limit
        self.cursor = cursor
    }
}

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

/// Channels changed or gone for the user since a token.
public struct ChannelChangeLogs: Sendable, Hashable, Codable {
    /// Channels created or changed (including a new last message), in their newest version.
    public var updated: [Channel]
    /// Channels deleted, or that the user left or was removed from.
    public var deletedChannelURLs: [String]
    /// The token to ask from next time.
    public var token: String
    /// More changes are waiting: ask again with ``token``.
    public var hasMore: Bool

    /// Creates change logs.
    public init(updated: [Channel], deletedChannelURLs: [String], token: String, hasMore: Bool) {
        self.updated = updated
        self.deletedChannelURLs = deletedChannelURLs
        self.token = token
        self.hasMore = hasMore
    }
}
