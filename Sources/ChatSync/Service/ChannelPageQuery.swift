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
