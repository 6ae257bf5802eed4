import Observation

/// A ``MessageCollection`` as an `@Observable` model for SwiftUI (or any Observation user).
///
/// Its three arrays follow the collection's lists through a subscription of its own (see
/// ``MessageCollection/events``), on the main actor; the loading state, `hasOlder`,
/// `hasNewer` and the last error come from its load methods. It imports no UI framework.
///
/// ```swift
/// struct ChannelScreen: View {
///     @State var model: MessageCollectionModel
///
///     var body: some View {
///         List {
///             if model.hasOlder {
///                 ProgressView().task { await model.loadOlder() }
///             }
///             ForEach(model.succeededMessages, id: \.messageId) { Text($0.text) }
///             ForEach(model.pendingMessages, id: \.reqId) { Text($0.text).opacity(0.5) }
///         }
///         .task { await model.loadOutbox() }
///     }
/// }
/// // ChannelScreen(model: MessageCollectionModel(collection: collection))
/// ```
///
/// The arrays change a moment after the collection does (one hop to the main actor). A
/// load method returns once they show what it loaded, and ``catchUp()`` waits until they
/// show every change made before it was called. The model owns its collection: when the
/// model goes, so does the collection, unless the app keeps it elsewhere.
@MainActor
@Observable
public final class MessageCollectionModel {
    /// The collection the model follows.
    public let collection: MessageCollection
    /// The succeeded messages, ascending by `(createdAt, messageId)`, as in ``MessageCollection/succeededMessages``.
    public private(set) var succeededMessages: [Message] = []
    /// The pending messages, ascending by creation, as in ``MessageCollection/pendingMessages``.
    public private(set) var pendingMessages: [Message] = []
    /// The failed messages, ascending by creation, as in ``MessageCollection/failedMessages``.
    public private(set) var failedMessages: [Message] = []
    /// A ``loadOlder()`` is running.
    public private(set) var isLoadingOlder = false
    /// A ``loadNewer()`` is running.
    public private(set) var isLoadingNewer = false
    /// Whether older messages may remain: `true` until a ``loadOlder()`` reports the oldest.
    public private(set) var hasOlder = true
    /// Whether newer messages may remain: `true` until a ``loadNewer()`` reports the
    /// newest (a collection at the newest messages answers that at its first call).
    public private(set) var hasNewer = true
    /// The error of the last load that failed; cleared by the next load that succeeds.
    public private(set) var lastError: (any Error)?
    /// The service reported a gap too big to fill: the app should reset the viewpoint
    /// (``resetViewpoint(to:)``) or open a new collection.
    public private(set) var hugeGapDetected = false
    /// The channel was deleted, or the user left it.
    public private(set) var channelRemoved = false

    private let subscription: ModelSubscription<MessageCollectionEvent>

    /// Follows `collection` from its current lists on.
    public init(collection: MessageCollection) {
        self.collection = collection
        let (engine, id) = (collection.engine, collection.id)
        subscription = ModelSubscription(
            subscribe: { await engine.subscribe(toView: id, $0) },
            mark: { await engine.mark($0, ofView: id, $1) },
            unsubscribe: { await engine.unsubscribe($0, fromView: id) })
        Task { [weak self, subscription] in await subscription.read { self?.apply($0) } }
    }

    deinit { subscription.end() }

    // MARK: - Loading

    /// Loads older messages (``MessageCollection/fetchSucceededMessages(_:)`` with
    /// `.previous`), unless a load of older messages is running; returns once the arrays
    /// show them. An error goes to ``lastError``.
    public func loadOlder() async { await load(.previous) }

    /// Loads newer messages (`.next`), unless a load of newer messages is running; returns
    /// once the arrays show them. An error goes to ``lastError``.
    public func loadNewer() async { await load(.next) }

    private func load(_ direction: Direction) async {
        let (loading, hasMore) =
            direction == .previous
            ? (\MessageCollectionModel.isLoadingOlder, \MessageCollectionModel.hasOlder)
            : (\MessageCollectionModel.isLoadingNewer, \MessageCollectionModel.hasNewer)
        guard !self[keyPath: loading] else { return }
        self[keyPath: loading] = true
        defer { self[keyPath: loading] = false }
        if let more = await attempt({ try await $0.fetchSucceededMessages(direction) }) { self[keyPath: hasMore] = more }
        await catchUp()
    }

    /// Adds the pending and failed messages that were in the outbox before the collection
    /// opened (``MessageCollection/fetchPendingMessages()``, then the failed ones).
    public func loadOutbox() async {
        _ = await attempt {
            try await $0.fetchPendingMessages()
            try await $0.fetchFailedMessages()
        }
        await catchUp()
    }

    /// Empties the succeeded messages and moves the viewpoint
    /// (``MessageCollection/resetViewpointTimestamp(_:)``); loads start from `timestamp` again.
    public func resetViewpoint(to timestamp: Int64) async {
        if await attempt({ try await $0.resetViewpointTimestamp(timestamp) }) != nil {
            (hasOlder, hasNewer, hugeGapDetected) = (true, true, false)
        }
        await catchUp()
    }

    /// Returns once the arrays show every change the collection made before this call.
    public func catchUp() async { await subscription.catchUp() }

    /// Runs `call` on the collection; its error goes to ``lastError``, its success clears it.
    private func attempt<Value: Sendable>(_ call: (MessageCollection) async throws -> Value) async -> Value? {
        do {
            let value = try await call(collection)
            lastError = nil
            return value
        } catch {
            lastError = error
            return nil
        }
    }

    // MARK: - Events

    private func apply(_ event: MessageCollectionEvent) {
        switch event {
        case .succeeded(let action, let messages): applySucceeded(action, messages)
        case .pending(let action, let messages): Self.apply(action, messages, to: &pendingMessages)
        case .failed(let action, let messages, _): Self.apply(action, messages, to: &failedMessages)
        case .hugeGapDetected: hugeGapDetected = true
        case .channelRemoved: channelRemoved = true
        case .newMessage, .channelUpdated, .operationFailed: break
        }
    }

    /// The succeeded list is kept sorted: a page lands at either end (or, for an edit that
    /// now matches the filter, inside), found by binary search.
    private func applySucceeded(_ action: MessageEventAction, _ messages: [Message]) {
        switch action {
        case .insert:
            let incoming = messages.sorted { $0.sortKey < $1.sortKey }
            guard let first = incoming.first, let last = incoming.last else { return }
            if succeededMessages.last.map({ $0.sortKey < first.sortKey }) ?? true {
                succeededMessages.append(contentsOf: incoming)
            } else if let oldest = succeededMessages.first, last.sortKey < oldest.sortKey {
                succeededMessages.insert(contentsOf: incoming, at: 0)
            } else {
                for message in incoming {
                    let index = succeededMessages.partitionPoint { $0.sortKey < message.sortKey }
                    succeededMessages.insert(message, at: index)
                }
            }
        case .update:
            for message in messages {
                // An edit keeps its key, so the search finds it; the scan is for safety only.
                let found = succeededMessages.partitionPoint { $0.sortKey < message.sortKey }
                if found < succeededMessages.count, succeededMessages[found].messageId == message.messageId {
                    succeededMessages[found] = message
                } else if let index = succeededMessages.firstIndex(where: { $0.messageId == message.messageId }) {
                    succeededMessages[index] = message
                }
            }
        case .remove:
            let ids = Set(messages.map(\.messageId))
            succeededMessages.removeAll { ids.contains($0.messageId) }
        case .clear:
            succeededMessages.removeAll()
        }
    }

    /// Pending and failed lists are ascending by `createdAt`, as the collection keeps them:
    /// an insertion goes after the messages of its millisecond, an update replaces in
    /// place (Guarantees: Collection events); identity is `reqId`.
    private static func apply(_ action: MessageEventAction, _ messages: [Message], to list: inout [Message]) {
        switch action {
        case .insert:
            for message in messages { list.insertInCreationOrder(message) }
        case .update:
            for message in messages {
                if let index = list.firstIndex(where: { $0.reqId == message.reqId }) { list[index] = message }
            }
        case .remove:
            let reqIds = Set(messages.map(\.reqId))
            list.removeAll { reqIds.contains($0.reqId) }
        case .clear:
            list.removeAll()
        }
    }
}
