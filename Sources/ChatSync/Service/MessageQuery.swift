/// A request for messages around a position in a channel.
///
/// Positions are ``MessageKey``s, `(createdAt, messageId)`. The previous side is
/// the `prevLimit` newest messages before the anchor, the next side the
/// `nextLimit` oldest after it; `inclusive` puts a message exactly at the anchor
/// on the sides that ask for messages. With ``anchorMessageId`` `nil`, the
/// anchor is the whole millisecond ``timestamp``: every message created then is
/// "at" the anchor.
///
/// ```swift
/// // the 50 newest messages
/// let newest = MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 50, nextLimit: 0)
/// ```
public struct MessageQuery: Sendable, Hashable, Codable {
    /// The channel to read.
    public var channelURL: String
    /// The anchor's time, in milliseconds since 1970.
    public var timestamp: Int64
    /// The anchor's message id, which breaks ties on ``timestamp``; `nil` anchors on the whole millisecond.
    public var anchorMessageId: Int64?
    /// How many messages before the anchor to answer.
    public var prevLimit: Int
    /// How many messages after the anchor to answer.
    public var nextLimit: Int
    /// Whether messages at the anchor are included.
    public var inclusive: Bool
    /// Only messages that match; `nil` for all.
    public var filter: MessageFilter?

    /// Creates a query.
    public init(
        channelURL: String, timestamp: Int64, anchorMessageId: Int64? = nil,
        prevLimit: Int, nextLimit: Int, inclusive: Bool = true, filter: MessageFilter? = nil
    ) {
        self.channelURL = channelURL
        self.timestamp = timestamp
        self.anchorMessageId = anchorMessageId
        self.prevLimit = prevLimit
        self.nextLimit = nextLimit
        self.inclusive = inclusive
        self.filter = filter
    }

    /// Whether `key` lies on the previous side of the anchor (or at it, when inclusive).
    public func isOnPreviousSide(_ key: MessageKey) -> Bool {
        guard let anchorMessageId else {
            return inclusive ? key.createdAt <= timestamp : key.createdAt < timestamp
        }
        let anchor = MessageKey(createdAt: timestamp, messageId: anchorMessageId)
        return inclusive ? key <= anchor : key < anchor
    }

    /// Whether `key` lies on the next side of the anchor (or at it, when inclusive).
    public func isOnNextSide(_ key: MessageKey) -> Bool {
        guard let anchorMessageId else {
            return inclusive ? key.createdAt >= timestamp : key.createdAt > timestamp
        }
        let anchor = MessageKey(createdAt: timestamp, messageId: anchorMessageId)
        return inclusive ? key >= anchor : key > anchor
    }
}
