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

    /// Whether `channel` passes the query's filters (membership is the service's own
    /// check). Custom types compare byte for byte: services and the cache's SQL take ids
    /// as bytes, though Swift's `==` takes two spellings of one accented letter for one.
    /// A service answering channel pages can call this rather than restate the rule.
    public func matches(_ channel: Channel) -> Bool {
        Self.passes(channel, includeEmpty: includeEmpty, customTypes: customTypes)
    }

    /// The one rule behind both this and ``ChannelListQuery/matches(_:)``.
    static func passes(_ channel: Channel, includeEmpty: Bool, customTypes: Set<String>?) -> Bool {
        (includeEmpty || channel.lastMessage != nil) && (customTypes?.containsSameBytes(as: channel.customType) ?? true)
    }
}
