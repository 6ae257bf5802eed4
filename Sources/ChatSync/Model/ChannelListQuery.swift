/// What a ``ChannelCollection`` lists, and how.
///
/// ```swift
/// let teams = ChannelListQuery(order: .channelNameAlphabetical, includeEmpty: false,
///                              customTypes: ["team"], limit: 30)
/// ```
public struct ChannelListQuery: Sendable, Hashable {
    /// The sort order.
    public var order: ChannelOrder
    /// Whether channels without messages are listed.
    public var includeEmpty: Bool
    /// Only channels of these custom types; `nil` for all.
    public var customTypes: Set<String>?
    /// Channels per page, in `1...100`.
    public var limit: Int

    /// Creates a query.
    public init(order: ChannelOrder = .latestLastMessage, includeEmpty: Bool = true, customTypes: Set<String>? = nil, limit: Int = 20) {
        self.order = order
        self.includeEmpty = includeEmpty
        self.customTypes = customTypes
        self.limit = limit
    }

    /// Whether `channel` passes the query's filters.
    ///
    /// Custom types compare byte for byte, as services and the cache's SQL compare them:
    /// `"t\u{E9}am"` and `"te\u{301}am"` are two types, though Swift's `==` takes them for
    /// one. So a list shows the same channels whether they came live or from the cache.
    public func matches(_ channel: Channel) -> Bool {
        ChannelPageQuery.passes(channel, includeEmpty: includeEmpty, customTypes: customTypes)
    }
}
