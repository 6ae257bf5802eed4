/// A position in a channel's timeline: `(createdAt, messageId)`, compared in that order.
///
/// Pages, chunks and cursors are expressed in keys rather than bare timestamps so
/// that messages sharing a `createdAt` are never skipped or repeated.
///
/// ```swift
/// MessageKey(createdAt: 10, messageId: 2) < MessageKey(createdAt: 10, messageId: 3)  // true
/// ```
public struct MessageKey: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970.
    public var createdAt: Int64
    /// The server's message id; breaks ties on `createdAt`.
    public var messageId: Int64

    /// Creates a key.
    public init(createdAt: Int64, messageId: Int64) {
        self.createdAt = createdAt
        self.messageId = messageId
    }

    /// The key before every message.
    public static let min = MessageKey(createdAt: .min, messageId: .min)
    /// The key after every message.
    public static let max = MessageKey(createdAt: .max, messageId: .max)

    /// Orders by `createdAt`, then `messageId`.
    public static func < (lhs: MessageKey, rhs: MessageKey) -> Bool {
        (lhs.createdAt, lhs.messageId) < (rhs.createdAt, rhs.messageId)
    }

    /// `createdAt:messageId`, for logs and test failures.
    public var description: String { "\(createdAt):\(messageId)" }
}
