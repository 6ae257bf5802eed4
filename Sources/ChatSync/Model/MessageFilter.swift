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
    public func matches(_ message: Message) -> Bool {
        if let kinds, !kinds.contains(message.kind) { return false }
        if let customTypes, !customTypes.contains(message.customType) { return false }
        if let senderIds, !senderIds.contains(message.senderId) { return false }
        return true
    }
}
