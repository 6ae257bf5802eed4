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
