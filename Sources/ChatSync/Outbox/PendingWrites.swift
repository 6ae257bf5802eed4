/// The user's edits and deletions still in the outbox, laid over the service's version
/// of each message wherever a message is shown.
///
/// The cache keeps what the service last confirmed; a view shows that with the queued
/// edits applied and the messages being deleted hidden. So undoing a refused operation
/// is only forgetting it, a real-time update never overwrites the local text, and a
/// relaunch rebuilds the same picture from the outbox table.
///
/// A reference type because every view reads the same one; it lives on the engine's
/// actor like the views, and only the engine changes it.
final class PendingWrites {
    struct MessageRef: Hashable {
        var channelURL: String
        var messageId: Int64
    }

    /// Every queued operation, in sequence order.
    private(set) var queued: [QueuedOperation] = []
    /// Per message, the operations queued for it, in order.
    private var byMessage: [MessageRef: [QueuedOperation]] = [:]

    var isEmpty: Bool { queued.isEmpty }

    func load(_ operations: [QueuedOperation]) {
        queued = operations.sorted { $0.seq < $1.seq }
        byMessage = Dictionary(grouping: queued) { MessageRef(channelURL: $0.channelURL, messageId: $0.messageId) }
    }

    func add(_ operation: QueuedOperation) {
        queued.append(operation)
        byMessage[ref(operation), default: []].append(operation)
    }

    /// Forgets an operation; answers it if it was queued.
    @discardableResult
    func remove(id: String) -> QueuedOperation? {
        guard let index = queued.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = queued.remove(at: index)
        let key = ref(removed)
        byMessage[key]?.removeAll { $0.id == id }
        if byMessage[key]?.isEmpty == true { byMessage[key] = nil }
        return removed
    }

    func setAttempts(id: String, _ attempts: Int) {
        guard let index = queued.firstIndex(where: { $0.id == id }) else { return }
        queued[index].attempts = attempts
        let key = ref(queued[index])
        if let inner = byMessage[key]?.firstIndex(where: { $0.id == id }) { byMessage[key]?[inner].attempts = attempts }
    }

    func contains(id: String) -> Bool { queued.contains { $0.id == id } }

    /// The operations queued for one message, in order.
    func operations(channelURL: String, messageId: Int64) -> [QueuedOperation] {
        byMessage[MessageRef(channelURL: channelURL, messageId: messageId)] ?? []
    }

    /// The first operation of a channel's text lane.
    func head(of channelURL: String) -> QueuedOperation? { queued.first { $0.channelURL == channelURL } }

    /// Channels with operations queued.
    var channelURLs: Set<String> { Set(queued.map(\.channelURL)) }

    /// How many messages of the channel have their deletion queued.
    func deletionCount(channelURL: String) -> Int {
        queued.count { $0.channelURL == channelURL && $0.operation.kind == .deletion }
    }

    func isBeingDeleted(channelURL: String, messageId: Int64) -> Bool {
        operations(channelURL: channelURL, messageId: messageId).contains { $0.operation.kind == .deletion }
    }

    /// The message as the user should see it: `nil` while its deletion is queued; with
    /// the last queued edit's text and `isEditPending` while edits are queued; as given
    /// otherwise.
    func overlaid(_ message: Message) -> Message? {
        guard !byMessage.isEmpty, message.messageId > 0,
            let operations = byMessage[MessageRef(channelURL: message.channelURL, messageId: message.messageId)]
        else { return message }
        if operations.contains(where: { $0.operation.kind == .deletion }) { return nil }
        guard let text = operations.last(where: { $0.operation.kind == .edit })?.operation.text else { return message }
        var shown = message
        shown.text = text
        shown.isEditPending = true
        return shown
    }

    private func ref(_ operation: QueuedOperation) -> MessageRef {
        MessageRef(channelURL: operation.channelURL, messageId: operation.messageId)
    }
}
