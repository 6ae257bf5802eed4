/// Narrows a message collection to some kinds, custom types or senders.
///
/// Every criterion that is not `nil` must hold. A text message's custom type is `""`.
///
/// ```swift
/// let photosFromBob = MessageFilter(kinds: [.image], senderIds: ["bob"])
/// photosFromBob.matches(message)
/// ```
public struct MessageFilter: Sendable, Hashable, Codable {
    /// The kinds to keep; `nil` keeps all.
    public var kinds: Set<MessageKind>?
    /// The custom types to keep; `nil` keeps all.
    public var customTypes: Set<String>?
    /// The senders to keep; `nil` keeps all.
    public var senderIds: Set<String>?

    /// Creates a filter; with no arguments it keeps every message.
    public init(kinds: Set<MessageKind>? = nil, customTypes: Set<String>? = nil, senderIds: Set<String>? = nil) {
        self.kinds = kinds
        self.customTypes = customTypes
        self.senderIds = senderIds
    }

    /// `true` when the filter keeps every message.
    public var isEmpty: Bool { kinds == nil && customTypes == nil && senderIds == nil }

    /// Whether `message` passes every criterion that is set.
    ///
    /// Custom types and sender ids compare byte for byte, as services compare ids and as
    /// the cache's queries do: `"zo\u{EB}"` (a precomposed ë) and `"zoe\u{308}"` (an e
    /// and a combining diaeresis) are two senders, though Swift's `==` takes them for one.
    /// So a view shows the same messages whether they came live or from the cache. (A
    /// `Set` keeps only one of two such spellings: a filter for both needs two views. For
    /// the same reason two filters that differ only in such a spelling are `==`, though
    /// they match different messages.)
    public func matches(_ message: Message) -> Bool {
        if let kinds, !kinds.contains(message.kind) { return false }
        if let customTypes, !customTypes.containsSameBytes(as: message.customType) { return false }
        if let senderIds, !senderIds.containsSameBytes(as: message.senderId) { return false }
        return true
    }
}
