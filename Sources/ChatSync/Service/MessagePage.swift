/// The answer to a ``MessageQuery``.
public struct MessagePage: Sendable, Hashable, Codable {
    /// The messages, ascending by `(createdAt, messageId)`: the previous side, then the next side.
    public var messages: [Message]
    /// More messages exist before the oldest one answered on the previous side.
    public var hasPrev: Bool
    /// More messages exist after the newest one answered on the next side.
    public var hasNext: Bool

    /// Creates a page.
    public init(messages: [Message], hasPrev: Bool, hasNext: Bool) {
        self.messages = messages
        self.hasPrev = hasPrev
        self.hasNext = hasNext
    }
}
