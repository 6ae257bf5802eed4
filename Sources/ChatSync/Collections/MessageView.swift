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
    /// A ring, so that a page joins either end, and a trim or a live message's arrival
    /// drops from either end, without moving the rest of the window (see ``MessageWindow``).
    private(set) var succeeded = MessageWindow()
    /// The ids in ``succeeded``, to answer "is it in the view" without a scan.
    private var succeededIds: Set<Int64> = []
    /// The pending list, ascending by creation.
    var pending: [Message] { pendingList.messages }
    /// The failed list, ascending by creation.
    var failed: [Message] { failedList.messages }
    /// Changed only through MessageView+OutboxLists.swift, which emits each change.
    var pendingList = KeyedList()
    var failedList = KeyedList()

    /// What the view is known to hold; changed only through its methods.
    var bounds = ViewBounds()
    var lowerBound: MessageKey? { bounds.lower }
    var upperBound: MessageKey? { bounds.upper }
    var reachedOldest: Bool { bounds.reachedOldest }
    var reachedNewest: Bool { bounds.reachedNewest }
    /// A view at `.max` that holds nothing, has never been fetched and is not being
    /// fetched: it stands at the newest edge, so live messages enter it once the channel
    /// is live (Guarantees: Live updates and reconnect). (A running fetch places the view itself.)
    var isFresh: Bool {
        viewpoint == .max && lowerBound == nil && upperBound == nil && !reachedNewest && succeeded.isEmpty
            && fetching.isEmpty
    }

    /// While fresh: the newest message the cache held when the view opened at `.max`.
    /// When the channel goes live the view shows what came after it (its newest page).
    var newestKnownAtOpen: MessageKey?

    /// The channel's cached history was dropped under this view (`clearCache()`, or a
    /// refused change-log token) and left it at `.max`, marked by `newestKnownAtOpen = .min`
    /// (nothing known), and it has not shown the newest page since. While it is fresh, its
    /// channel is proven live for it, at once or when its fetch ends (see `SyncEngine.fetchEnded`).
    var isEmptiedByHistoryDrop: Bool { newestKnownAtOpen == .min }

    /// Set while the completion of this view's newest page is owed (see
    /// ``SyncEngine/completeNewestPage(of:above:)``); a viewpoint reset drops it.
    var owedNewestPage: OwedNewestPage?

    /// What this connection's catch-ups brought the view, kept across their retries.
    var caughtUp = CaughtUpCount()

    /// Directions with a fetch running.
    var fetching: Set<Direction> = []
    /// Bumped by a viewpoint reset, so a fetch that started before it stops delivering.
    var generation = 0

    /// The stream and handler its events go to.
    let outlet: CollectionEventOutlet
    /// The user's queued edits and deletions: every message enters through them.
    private let pendingWrites: PendingWrites

    init(
        id: Int, channelURL: String, filter: MessageFilter, viewpoint: Int64, limit: Int, capacity: Int,
        pendingWrites: PendingWrites, events: FirstEventStream<MessageCollectionEvent>
    ) {
        self.pendingWrites = pendingWrites
        self.id = id
        self.channelURL = channelURL
        self.filter = filter
        self.viewpoint = viewpoint
        self.limit = limit
        self.capacity = capacity
        self.outlet = CollectionEventOutlet(first: events)
    }

    // MARK: - Events

    /// Sends an event to the stream and the handler, in that order.
    func emit(_ event: MessageCollectionEvent) { outlet.emit(event) }

    // MARK: - Anchors

    /// The viewpoint as a key: after every message created at the viewpoint's millisecond.
    var viewpointKey: MessageKey { MessageKey(createdAt: viewpoint, messageId: .max) }

    /// Where a view with no upper bound began reading `chunk` going `.previous`: at its
    /// viewpoint, or at the chunk's end when that lies below it.
    func previousReadTop(in chunk: Chunk) -> MessageKey { min(viewpointKey, chunk.end) }

    /// Where a fetch in `direction` reads from, and whether a message exactly there counts.
    func anchor(for direction: Direction) -> (key: MessageKey, inclusive: Bool) {
        switch direction {
        case .previous: lowerBound.map { ($0, false) } ?? (viewpointKey, true)
        case .next: upperBound.map { ($0, false) } ?? (viewpointKey, false)
        }
    }

    /// Whether `key` lies in the range the view is complete over. Above the upper
    /// bound only while the view follows the live edge (`followingLive`). A view with no
    /// lower bound has only fetched forward from its viewpoint, so it covers what lies
    /// after the viewpoint (nothing, at `.max`); that holds for an empty view that
    /// fetched `.next` to the end too, which a message dated in the past must still enter.
    func covers(_ key: MessageKey, followingLive: Bool) -> Bool {
        guard let upperBound else { return false }
        if key > upperBound { return reachedNewest && followingLive }
        guard let lowerBound else { return key > viewpointKey }
        return reachedOldest || key >= lowerBound
    }

    func contains(messageId: Int64) -> Bool { succeededIds.contains(messageId) }

    /// Where the view holds the message with `messageId`, if it does.
    func key(ofMessage messageId: Int64) -> MessageKey? { index(of: messageId).map { succeeded[$0].sortKey } }

    private func index(of messageId: Int64) -> Int? {
        guard succeededIds.contains(messageId) else { return nil }
        return succeeded.firstIndex { $0.messageId == messageId }
    }

    // MARK: - Succeeded list

    /// Adds messages that belong to the view (sorted or not); ones it already holds are
    /// replaced instead. Emits the insertions and updates, then trims to capacity from
    /// the end opposite `growing`. Answers how many were inserted.
    @discardableResult
    func insert(_ incoming: [Message], growing: Direction) -> Int {
        var messages = incoming
        if !pendingWrites.isEmpty {
            // A message being deleted stays out, but the view still covers its place,
            // so the next fetch reads past it instead of serving it again.
            messages = incoming.compactMap { pendingWrites.overlaid($0) }
            if messages.count < incoming.count, let lower = incoming.map(\.sortKey).min(), let upper = incoming.map(\.sortKey).max() {
                bounds.extendLower(to: lower)
                bounds.extendUpper(to: upper)
            }
        }
        var updated: [Message] = []
        var fresh: [Message]
        if noteIdsIfAllNew(messages) {
            // The usual page: every message new to the view, each once. The page itself is
            // then what the event holds, shared, and what the window copies in, with no
            // sorting out message by message.
            fresh = messages
        } else {
            (fresh, updated) = sortOut(messages)
        }
        if !fresh.isEmpty {
            // By index: zipping the list with itself copied every message twice.
            if !(fresh.indices.dropFirst().allSatisfy { fresh[$0 - 1].sortKey < fresh[$0].sortKey }) {
                fresh.sort { $0.sortKey < $1.sortKey }
            }
            // Pages grow one end of the view: append or prepend in one move; otherwise merge.
            if succeeded.isEmpty {
                succeeded = MessageWindow(fresh)
            } else if let last = succeeded.last, fresh[0].sortKey <= last.sortKey {
                if let first = succeeded.first, fresh[fresh.count - 1].sortKey < first.sortKey {
                    succeeded.prepend(contentsOf: fresh)
                } else {
                    succeeded = Self.merge(succeeded, fresh)
                }
            } else {
                succeeded.append(contentsOf: fresh)
            }
        }
        if let first = succeeded.first?.sortKey { bounds.extendLower(to: first) }
        if let last = succeeded.last?.sortKey { bounds.extendUpper(to: last) }
        if !updated.isEmpty { emit(.succeeded(.update, updated)) }
        if !fresh.isEmpty { emit(.succeeded(.insert, fresh)) }
        trim(keeping: growing)
        return fresh.count
    }

    /// Notes the ids of `messages` as held when each is there once and none is held yet,
    /// and answers whether it did; otherwise the held ids stay as they were. Straight into
    /// the view's set: a set of the page's own, merged after, hashed every id twice.
    private func noteIdsIfAllNew(_ messages: [Message]) -> Bool {
        succeededIds.reserveCapacity(succeededIds.count + messages.count)
        for (offset, message) in messages.enumerated() where !succeededIds.insert(message.messageId).inserted {
            for earlier in messages[..<offset] { succeededIds.remove(earlier.messageId) }
            return false
        }
        return true
    }

    /// The careful path of ``insert(_:growing:)``, for a page that repeats an id or meets
    /// messages the view holds: replaces held messages by newer copies, removes those a
    /// service moved in time, and answers what is new (ids noted) and what was updated.
    private func sortOut(_ messages: [Message]) -> (fresh: [Message], updated: [Message]) {
        var fresh: [Message] = []
        var updated: [Message] = []
        var seen: Set<Int64> = []
        var moved: Set<Int64> = []
        // Sized once: a page of fifty grew each of these six or seven times.
        fresh.reserveCapacity(messages.count)
        seen.reserveCapacity(messages.count)
        // Of an id the page repeats, its newest copy counts (of equal ones the later), as in
        // the store, whose upsert never takes an older version: before, the first copy did,
        // and a view could show an older text than the cache held.
        let newest = Self.newestCopies(in: messages)
        for listed in messages where seen.insert(listed.messageId).inserted {
            let message = newest[listed.messageId] ?? listed
            guard succeededIds.contains(message.messageId) else {
                fresh.append(message)
                continue
            }
            guard let index = index(of: message.messageId) else { continue }
            if succeeded[index].sortKey != message.sortKey {
                // A message never moves in time; when a service says it did, one copy is
                // malformed. The newer copy wins (of equal ones the later), at its own place,
                // so the list stays sorted; the store keeps the same copy.
                guard message.updatedAt >= succeeded[index].updatedAt else { continue }
                moved.insert(message.messageId)
                fresh.append(message)
            } else if succeeded[index] != message, message.updatedAt >= succeeded[index].updatedAt {
                succeeded[index] = message
                updated.append(message)
            }
        }
        remove(messageIds: moved)
        succeededIds.reserveCapacity(succeededIds.count + fresh.count)
        for message in fresh { succeededIds.insert(message.messageId) }
        return (fresh, updated)
    }

    /// Replaces held messages by id; answers those replaced.
    func update(_ messages: [Message]) {
        var updated: [Message] = []
        for message in pendingWrites.isEmpty ? messages : messages.compactMap({ pendingWrites.overlaid($0) }) {
            guard let index = index(of: message.messageId), succeeded[index] != message,
                message.updatedAt >= succeeded[index].updatedAt,  // a stale copy never undoes an edit
                message.sortKey == succeeded[index].sortKey  // an edit never moves a message; a copy that does is malformed
            else { continue }
            succeeded[index] = message
            updated.append(message)
        }
        if !updated.isEmpty { emit(.succeeded(.update, updated)) }
    }

    /// Removes held messages by id and emits one removal.
    func remove(messageIds: Set<Int64>) {
        guard !messageIds.isEmpty else { return }
        guard !succeededIds.isDisjoint(with: messageIds) else { return }
        var removed: [Message] = []
        succeeded.removeAll { message in
            guard messageIds.contains(message.messageId) else { return false }
            removed.append(message)
            return true
        }
        for message in removed { succeededIds.remove(message.messageId) }
        if !removed.isEmpty { emit(.succeeded(.remove, removed)) }
    }

    /// The channel's cached history was dropped (`clearCache()`, a refused change-log
    /// token): the view empties. One that showed the newest messages stands at them again
    /// and, knowing nothing of the channel now (`.min`, which `followNewest` keeps where
    /// `nil` would be replaced), shows the newest page once the channel is proven live,
    /// whatever the cache learns before; one in history keeps its viewpoint and fills
    /// again as the app fetches.
    func historyDropped() {
        clearSucceeded(viewpoint: reachedNewest ? .max : nil)
        if viewpoint == .max { newestKnownAtOpen = .min }
    }

    /// Empties the succeeded list with one clear event and forgets what it covered.
    func clearSucceeded(viewpoint newViewpoint: Int64? = nil) {
        succeeded.removeAll()
        succeededIds.removeAll()
        bounds = ViewBounds()
        newestKnownAtOpen = nil
        owedNewestPage = nil
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
            removed = succeeded.removeLast(excess)
            bounds.trimNewer(to: succeeded.last?.sortKey)
        } else {
            removed = succeeded.removeFirst(excess)
            bounds.trimOlder(to: succeeded.first?.sortKey)
        }
        for message in removed { succeededIds.remove(message.messageId) }
        emit(.succeeded(.remove, removed))
    }
}
