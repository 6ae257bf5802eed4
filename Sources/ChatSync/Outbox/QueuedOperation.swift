/// An edit or deletion as the outbox holds it: the operation, its place in the outbox's
/// one sequence (FIFO with the channel's text messages), and the retries it has spent.
struct QueuedOperation: Sendable, Hashable {
    var operation: OutboxOperation
    var seq: Int64
    var attempts: Int

    var id: String { operation.id }
    var channelURL: String { operation.channelURL }
    var messageId: Int64 { operation.messageId }
}
