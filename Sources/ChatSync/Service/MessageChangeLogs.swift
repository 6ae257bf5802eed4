/// Updates and deletions in one channel since a token.
///
/// ```swift
/// var token = storedToken
/// repeat {
///     let logs = try await service.messageChangeLogs(channelURL: url, token: token, limit: 100)
///     apply(logs.updated, logs.deletedMessageIds)
///     token = logs.token
/// } while logs.hasMore
/// ```
public struct MessageChangeLogs: Sendable, Hashable, Codable {
    /// Messages changed since the token, in their newest version.
    public var updated: [Message]
    /// Ids of messages deleted since the token.
    public var deletedMessageIds: [Int64]
    /// The token to ask from next time.
    public var token: String
    /// More changes are waiting: ask again with ``token``.
    public var hasMore: Bool

    /// Creates change logs.
    public init(updated: [Message], deletedMessageIds: [Int64], token: String, hasMore: Bool) {
        self.updated = updated
        self.deletedMessageIds = deletedMessageIds
        self.token = token
        self.hasMore = hasMore
    }
}
