/// An edit or deletion the reference server applied under a client's operation id.
public struct AppliedOperation: Sendable, Hashable {
    /// The client's operation id (the `Idempotency-Key` header).
    public let id: String
    /// The message it changed.
    public let messageId: Int64
    /// How many requests carried the id, the first included; repeats changed nothing.
    public let requests: Int
}
