/// The engine's state of one ``MessageCollection``: its window of messages, what it
/// is known to be complete over, and the stream its events go to.
///
/// Only the engine touches it, so it needs no locking. It holds at most
/// `capacity` succeeded messages; the database holds the rest.
final class MessageView {
    let id: Int
    let channelURL: String
    let filter: MessageFilter
    let limit: Int
    let capacity: Int
    var viewpoint: Int64

    /// Ascending by `(createdAt, messageId)`, no duplicates, contiguous in the channel.
    private(set) var succeeded: [Message] = [] {
        didSet {
            succeededIds = Set(succeeded.lazy.map(\.messageId))
        }
    }
    /// The ids in ``succeeded``, to answer "is it in the view" without a scan.
    private var succeededIds: Set<Int64> = []
    /// Ascending by creation.
    private(set) var pending: [Message] = []
    /// Ascending by creation.
    private(set) var failed: [Message] = []

    /// The view holds every matching message from here up to its newest (exclusive of nothing);
    /// `nil` until the first delivery.
    var lowerBound: MessageKey?
    /// The view holds every matching message up to here; `nil` until the first delivery.
    var upperBound: MessageKey?
    /// The view reaches the channel's first message.
    var reachedOldest = false
    /// The view follows the channel's newest messages: live messages enter it.
    var reachedNewest = false
    /// Directions with a fetch running.
    var fetching: Set<Direction> = []
    /// Bumped by a viewpoint reset, so a fetch that started before it stops delivering.
    var generation = 0

    private let continuation: AsyncStream<MessageCollectionEvent>.Continuation
    private var handler: (any MessageCollectionHandler)?
    /// The public handle, for handler callbacks; weak so a dropped collection can go away.
    weak var collection: MessageCollection?

    init(
        id: Int, channelURL: String, filter: MessageFilter, viewpoint: Int64, limit: Int, capacity: Int,
        continuation: AsyncStream<MessageCollectionEvent>.Continuation
    ) {
        self.id = id
        self.channelURL = channelURL
        self.filter = filter
        self.viewpoint = viewpoint
        self.limit = limit
        self.capacity = capacity
        self.continuation = continuation
    }

    // MARK: - Events

    func setHandler(_ handler: (any MessageCollectionHandler)?) {
        self.handler = handler
    }

    /// Sends an event to the stream and the handler, in that order.
    func emit(_ event: MessageCollectionEvent) {
        continuation.yield(event)
        if let handler, let collection { event.deliver(to: handler, from: collection) }
    }

    /// Ends the event stream; no event follows.
    func finish() {
        handler = nil
        continuation.finish()
    }

    // MARK: - Anchors

    /// The viewpoint as a key: after every message created at the viewpoint's millisecond.
    var viewpointKey: MessageKey { MessageKey(createdAt: viewpoint, messageId: .max) }

    /// Where a fetch in `direction` reads from, and whether a message exactly there counts.
    func anchor(for direction: Direction) -> (key: MessageKey, inclusive: Bool) {
        switch direction {
        case .previous: lowerBound.map { ($0, false) } ?? (viewpointKey, true)
        case .next: upperBound.map { ($0, false) } ?? (viewpointKey, false)
        }
    }

    /// Whether `key` lies in the range the view is complete over. Above the upper
    /// bound only while the view follows the live edge (`followingLive`); an empty
    /// view (no lower bound) covers nothing at or below its upper bound.
    func covers(_ key: MessageKey, followingLive: Bool) -> Bool {
        guard let upperBound else { return false }
        if key > upperBound { return reachedNewest && followingLive }
        guard let lowerBound else { return false }
        return reachedOldest || key >= lowerBound
    }

    func contains(messageId: Int64) -> Bool { succeededIds.contains(messageId) }

    private func index(of messageId: Int64) -> Int? {
        guard succeededIds.contains(messageId) else { return nil }
        return succeeded.firstIndex { $0.messageId == messageId }
    }

    // MARK: - Succeeded list

    /// Adds messages that belong to the view (sorted or not); ones it already holds are
    /// replaced instead. Emits the insertions and updates, then trims to capacity from
    /// the end opposite `growing`. Answers how many were inserted.
    @discardableResult
    func insert(_ messages: [Message], growing: Direction) -> Int {
        var list = succeeded  // mutated locally, assigned once, so the id set is rebuilt once
        var ids = succeededIds
        var inserted: [Message] = []
        var updated: [Message] = []
        for message in messages.sorted(by: { $0.sortKey < $1.sortKey }) {
            if ids.contains(message.messageId), let index = list.firstIndex(where: { $0.messageId == message.messageId }) {
                if list[index] != message, message.updatedAt >= list[index].updatedAt {
                    list[index] = message
                    updated.append(message)
                }
                continue
            }
            let position = list.partitionPoint { $0.sortKey < message.sortKey }
            list.insert(message, at: position)
            ids.insert(message.messageId)
            inserted.append(message)
        }
        succeeded = list
        if let first = succeeded.first?.sortKey { lowerBound = min(lowerBound ?? first, first) }
        if let last = succeeded.last?.sortKey { upperBound = max(upperBound ?? last, last) }
        if !updated.isEmpty { emit(.succeeded(.update, updated)) }
        if !inserted.isEmpty { emit(.succeeded(.insert, inserted)) }
        trim(keeping: growing)
        return inserted.count
    }

    /// Replaces held messages by id; answers those replaced.
    func update(_ messages: [Message]) {
        var updated: [Message] = []
        for message in messages {
            guard let index = index(of: message.messageId), succeeded[index] != message,
                message.updatedAt >= succeeded[index].updatedAt  // a stale copy never undoes an edit
            else { continue }
            succeeded[index] = message
            updated.append(message)
        }
        if !updated.isEmpty { emit(.succeeded(.update, updated)) }
    }

    /// Removes held messages by id and emits one removal.
    func remove(messageIds: Set<Int64>) {
        guard !messageIds.isEmpty else { return }
        var removed: [Message] = []
        succeeded.removeAll { message in
            guard messageIds.contains(message.messageId) else { return false }
            removed.append(message)
            return true
        }
        if !removed.isEmpty { emit(.succeeded(.remove, removed)) }
    }

    /// Empties the succeeded list with one clear event and forgets what it covered.
    func clearSucceeded(viewpoint newViewpoint: Int64? = nil) {
        succeeded.removeAll()
        lowerBound = nil
        upperBound = nil
        reachedOldest = false
        reachedNewest = false
        generation += 1
        if let newViewpoint { viewpoint = newViewpoint }
        emit(.succeeded(.clear, []))
    }

    /// Keeps at most `capacity` messages, removing from the end opposite the growth.
    private func trim(keeping growing: Direction) {
        let excess = succeeded.count - capacity
        guard excess > 0 else { return }
        let removed: [Message]
        if growing == .previous {
            removed = Array(succeeded.suffix(excess))
            succeeded.removeLast(excess)
            upperBound = succeeded.last?.sortKey
            reachedNewest = false
        } else {
            removed = Array(succeeded.prefix(excess))
            succeeded.removeFirst(excess)
            lowerBound = succeeded.first?.sortKey
            reachedOldest = false
        }
        emit(.succeeded(.remove, removed))
    }

    // MARK: - Pending and failed lists

    func pendingIndex(_ reqId: String) -> Int? { pending.firstIndex { $0.reqId == reqId } }
    func failedIndex(_ reqId: String) -> Int? { failed.firstIndex { $0.reqId == reqId } }

    /// Adds to the pending list (or replaces the entry with the same `reqId`).
    func upsertPending(_ message: Message) {
        if let index = pendingIndex(message.reqId) {
            guard pending[index] != message else { return }
            pending[index] = message
            emit(.pending(.update, [message]))
        } else {
            pending.append(message)
            emit(.pending(.insert, [message]))
        }
    }

    @discardableResult
    func removePending(_ reqId: String) -> Bool {
        guard let index = pendingIndex(reqId) else { return false }
        let message = pending.remove(at: index)
        emit(.pending(.remove, [message]))
        return true
    }

    func upsertFailed(_ message: Message, reason: FailedMessageEventActionReason) {
        if let index = failedIndex(message.reqId) {
            failed[index] = message
            emit(.failed(.update, [message], reason))
        } else {
            failed.append(message)
            emit(.failed(.insert, [message], reason))
        }
    }

    @discardableResult
    func removeFailed(_ reqId: String, reason: FailedMessageEventActionReason) -> Bool {
        guard let index = failedIndex(reqId) else { return false }
        let message = failed.remove(at: index)
        emit(.failed(.remove, [message], reason))
        return true
    }
}
