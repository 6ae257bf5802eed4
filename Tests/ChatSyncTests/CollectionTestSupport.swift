import ChatSyncTesting
import Testing

@testable import ChatSync

/// A simulator with a channel "general" (alice, bob, carol) and a manager for alice (or
/// for another member of general, `userId`).
struct Harness {
    let server: SimulatedChatServer
    var manager: SyncManager
    /// Whose manager this is: alice, unless ``make(history:seed:userId:databasePath:configure:wrapping:)`` named another.
    var userId = "alice"
    let path: String?
    var options: SyncManagerOptions
    /// A service wrapping alice's (faults, logs) that relaunches keep; `nil`: alice's own.
    var wrappedService: (any ChatService)? = nil
    /// Overlapping passes of the reconnect sync, over every manager the harness opened.
    let syncPassOverlaps = SyncPassOverlaps()
    static let channel = "general"

    /// - Parameter history: messages bob posts before alice's manager opens, 1 ms apart.
    static func make(
        history: Int = 0, seed: UInt64 = 0, userId: String = "alice", databasePath: String? = nil,
        configure: (inout SyncManagerOptions) -> Void = { _ in },
        wrapping wrap: ((any ChatService) -> any ChatService)? = nil
    ) async throws -> Harness {
        let server = SimulatedChatServer(seed: seed)
        try await server.createChannel(channel, members: ["alice", "bob", "carol"], name: "General")
        if userId != "alice" { try await server.addMember(userId, to: channel) }
        for index in 0..<history { try await server.post(.text("h\(index)"), from: "bob", to: channel) }
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        configure(&options)
        let wrapped = wrap?(server.service(for: userId))
        let service = wrapped ?? server.service(for: userId)
        let manager = try await SyncManager(userId: userId, service: service, databasePath: databasePath, options: options)
        let harness = Harness(
            server: server, manager: manager, userId: userId, path: databasePath, options: options, wrappedService: wrapped)
        await harness.syncPassOverlaps.watch(manager)
        return harness
    }

    /// ``make(history:seed:databasePath:configure:wrapping:)`` with alice's service wrapped
    /// by `wrapper` (faults, holds, counts), and that wrapper, for the test to steer.
    static func makeWrapped<Wrapper: ChatService>(
        history: Int = 0, seed: UInt64 = 0, databasePath: String? = nil,
        configure: (inout SyncManagerOptions) -> Void = { _ in },
        wrapper makeWrapper: @escaping (any ChatService) -> Wrapper
    ) async throws -> (Harness, Wrapper) {
        var made: Wrapper?
        let harness = try await make(
            history: history, seed: seed, databasePath: databasePath, configure: configure,
            wrapping: { service in
                let wrapper = makeWrapper(service)
                made = wrapper
                return wrapper
            })
        return (harness, try #require(made))
    }

    /// Closes the manager and opens a new one on the same database, as an app relaunch does.
    ///
    /// Every relaunch of a file whose manager is still open first checks that the file is
    /// that manager's alone: a second manager (the same user signing in twice, or the app
    /// and an extension of it) is refused while it runs, and the running one is left as it was.
    mutating func relaunch() async throws {
        if let path, await !manager.engine.isClosed {
            let code = await errorCode {
                _ = try await SyncManager(userId: userId, service: NeverService(), databasePath: path, options: options)
            }
            try #require(code == .databaseIO, "a second manager opened a cache file that one has open (\(String(describing: code)))")
        }
        await manager.close()
        try await reopen()
    }

    /// Opens a new manager on the same database (the old one closed already).
    mutating func reopen() async throws {
        let service = wrappedService ?? server.service(for: userId)
        manager = try await SyncManager(userId: userId, service: service, databasePath: path, options: options)
        await syncPassOverlaps.watch(manager)
    }

    func online() async {
        await manager.resumeSync()
        await settle()
    }

    /// Whether alice's manager is idle with every delivered event handled, for a test's own
    /// polling loop. The count is read again once the engine has answered: an event given
    /// to the manager in between (the echo of a send that ended meanwhile) would otherwise
    /// count as handled.
    static func isSettled(_ engine: SyncEngine, server: SimulatedChatServer, userId: String = "alice") async -> Bool {
        let delivered = await server.deliveredEventCount(for: userId)
        guard await engine.isIdle(deliveredEvents: delivered) else { return false }
        return await server.deliveredEventCount(for: userId) == delivered
    }

    /// Waits until alice's manager has handled every event the server delivered and no
    /// background work runs. It wakes on the engine's own signal (a background task ended,
    /// an event was handled), so it never hinges on how fast the machine is; a wall-clock
    /// bound of two minutes without any activity is only the last resort, for a manager
    /// that really hangs.
    ///
    /// - Parameter extraEvents: events the test's own service wrapper added to the
    ///   server's (see ``HostileService``), which the manager handles too.
    func settle(extraEvents: (() async -> Int)? = nil, sourceLocation: SourceLocation = #_sourceLocation) async {
        let engine = manager.engine
        let deliveredEvents = { await server.deliveredEventCount(for: userId) + (await extraEvents?() ?? 0) }
        let (listener, activity) = await engine.activitySignals()
        while true {
            let delivered = await deliveredEvents()
            if await engine.isIdle(deliveredEvents: delivered) {
                // Counted before the engine was asked: an event given to the manager in
                // between (the echo of a send that ended meanwhile, or a copy the test's
                // wrapper added) would not be waited for. Idle only if none came.
                if await deliveredEvents() != delivered { continue }
                await engine.endActivitySignals(listener)
                return
            }
            let woke = await withTaskGroup(of: Bool.self) { group in
                group.addTask {
                    for await _ in activity { return true }
                    return false
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(120))
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            if !woke { break }
        }
        await engine.endActivitySignals(listener)
        let delivered = await server.deliveredEventCount(for: userId)
        let handled = await manager.engine.connection.handledEventCount
        let tasks = await manager.engine.backgroundTaskCount
        Issue.record(
            "the manager did not settle: \(handled) of \(delivered) events handled, \(tasks) tasks", sourceLocation: sourceLocation)
    }

    func serverMessages(_ filter: MessageFilter = .init()) async -> [Message] {
        await server.messages(in: Self.channel).filter(filter.matches)
    }
}

/// Records every event a collection delivers to its handler, and replays them.
final class EventRecorder: MessageCollectionHandler {
    private let storage = LockedState<[MessageCollectionEvent]>([])

    var events: [MessageCollectionEvent] { storage.withLock { $0 } }
    func reset() { storage.withLock { $0.removeAll() } }
    /// How many `.hugeGapDetected` events arrived.
    var gapReports: Int {
        events.count { if case .hugeGapDetected = $0 { true } else { false } }
    }

    private func record(_ event: MessageCollectionEvent) { storage.withLock { $0.append(event) } }

    func collection(_ c: MessageCollection, didReceive action: MessageEventAction, succeededMessages: [Message]) {
        record(.succeeded(action, succeededMessages))
    }
    func collection(_ c: MessageCollection, didReceive action: MessageEventAction, pendingMessages: [Message]) {
        record(.pending(action, pendingMessages))
    }
    func collection(
        _ c: MessageCollection, didReceive action: MessageEventAction, failedMessages: [Message],
        reason: FailedMessageEventActionReason
    ) {
        record(.failed(action, failedMessages, reason))
    }
    func collection(_ c: MessageCollection, didReceiveNewMessage message: Message) { record(.newMessage(message)) }
    func collection(_ c: MessageCollection, didUpdateChannel channel: Channel) { record(.channelUpdated(channel)) }
    func collection(_ c: MessageCollection, didRemoveChannel channelURL: String) { record(.channelRemoved(channelURL)) }
    func collectionDidDetectHugeGap(_ c: MessageCollection) { record(.hugeGapDetected) }
    func collection(_ c: MessageCollection, didFailOperation operation: OutboxOperation, failure: SyncFailure) {
        record(.operationFailed(operation, failure))
    }

    var newMessages: [Message] { events.compactMap { if case .newMessage(let m) = $0 { m } else { nil } } }
    var failedReqIds: Set<String> {
        Set(events.flatMap { event -> [String] in if case .failed(_, let messages, _) = event { messages.map(\.reqId) } else { [] } })
    }
    var gapCount: Int { events.filter { $0 == .hugeGapDetected }.count }
    /// The reasons given when a message of the failed list, in flight again (resent, or
    /// found in flight after a relaunch), failed again: under the `.manual` policy every
    /// resend is the app's, so each must be `.updateResendFailed` (API §4.3).
    var reasonsWhenFailedAgain: [(reqId: String, reason: FailedMessageEventActionReason)] {
        var inFlight: Set<String> = []
        var reasons: [(reqId: String, reason: FailedMessageEventActionReason)] = []
        for case .failed(let action, let messages, let reason) in events {
            for message in messages {
                if action == .remove || action == .clear {
                    inFlight.remove(message.reqId)
                } else if message.syncState != .failed {
                    inFlight.insert(message.reqId)
                } else if inFlight.remove(message.reqId) != nil, action == .update {
                    reasons.append((message.reqId, reason))
                }
            }
            if action == .clear { inFlight.removeAll() }
        }
        return reasons
    }
    /// The request ids of the messages removed for the failed list's count.
    var removedForCount: Set<String> {
        var removed: Set<String> = []
        for case .failed(.remove, let messages, .removeExceededMaxCount) in events { removed.formUnion(messages.map(\.reqId)) }
        return removed
    }

    /// Messages removed for the failed list's limits (count or age) while not failed: a
    /// resend in flight, which the limits must leave alone (Guarantees: Failure, retries and resend policy).
    var removedForLimitsWhileNotFailed: [Message] {
        events.flatMap { event -> [Message] in
            guard case .failed(.remove, let messages, let reason) = event,
                reason == .removeExceededMaxCount || reason == .removeRetentionExpired
            else { return [] }
            return messages.filter { $0.syncState != .failed }
        }
    }
    var failedOperations: [OutboxOperation] {
        events.compactMap { if case .operationFailed(let operation, _) = $0 { operation } else { nil } }
    }
    /// Messages shown in an older version after a newer one, as (id, the newer version's
    /// `updatedAt`, the older's): a message's service version only moves forward, so
    /// showing it go back means an answer made before an edit undid the edit, however
    /// briefly (a check after settling would not see it). Every list counts: a message
    /// of the user's answered and awaiting its echo is shown in the pending or failed list
    /// in its service version (`messageId` set), and its echo moves it to the succeeded
    /// list. The user's own edits shown before they landed (`isEditPending`) are not
    /// service versions, and are left out.
    ///
    /// It sees a version going back, not an older one shown first: an answer made before
    /// an edit, for a message no list showed yet, is for the checks after settling.
    var versionsShownGoingBack: [(messageId: Int64, shown: Int64, later: Int64)] {
        var newest: [Int64: Int64] = [:]
        var back: [(messageId: Int64, shown: Int64, later: Int64)] = []
        for event in events {
            let shown: [Message]
            switch event {
            case .succeeded(.insert, let messages), .succeeded(.update, let messages): shown = messages
            case .pending(.insert, let messages), .pending(.update, let messages): shown = messages.filter { $0.messageId > 0 }
            case .failed(.insert, let messages, _), .failed(.update, let messages, _): shown = messages.filter { $0.messageId > 0 }
            default: continue
            }
            for message in shown where !message.isEditPending {
                if let seen = newest[message.messageId], message.updatedAt < seen {
                    back.append((message.messageId, seen, message.updatedAt))
                } else {
                    newest[message.messageId] = message.updatedAt
                }
            }
        }
        return back
    }
    var succeededEvents: [(MessageEventAction, [Message])] {
        events.compactMap { if case .succeeded(let a, let m) = $0 { (a, m) } else { nil } }
    }

    /// Edits reported failed while the view still showed them pending: replaying the
    /// events up to each `.operationFailed` of an edit, its message must no longer show the
    /// failed text as pending (the undo comes first; Guarantees: Edits and deletions).
    /// Edits are told apart by their text: the generators give the edits of one message
    /// distinct texts, since a second queued edit with the failed one's text rightly keeps
    /// it shown.
    var failuresReportedBeforeTheirUndo: [OutboxOperation] {
        var shown: [Int64: Message] = [:]
        var early: [OutboxOperation] = []
        for event in events {
            switch event {
            case .succeeded(.insert, let messages), .succeeded(.update, let messages):
                for message in messages { shown[message.messageId] = message }
            case .succeeded(.remove, let messages):
                for message in messages { shown[message.messageId] = nil }
            case .succeeded(.clear, _):
                shown.removeAll()
            case .operationFailed(let operation, _) where operation.kind == .edit:
                if let message = shown[operation.messageId], message.isEditPending, message.text == operation.text {
                    early.append(operation)
                }
            default:
                break
            }
        }
        return early
    }

    /// The three lists the events build, by the replay rules of Sources/ChatSync/ChatSync.docc/Guarantees.md (Collection events).
    func replay() -> (succeeded: [Message], pending: [Message], failed: [Message]) { replayEvents(events) }

    /// The collection's further consumers, checked with it by `checkInvariants`.
    let consumers = LockedState<FurtherConsumers?>(nil)
}

/// The three lists `events` build, by the replay rules of Sources/ChatSync/ChatSync.docc/Guarantees.md (Collection events).
func replayEvents(_ events: [MessageCollectionEvent]) -> (succeeded: [Message], pending: [Message], failed: [Message]) {
    var succeeded: [Message] = []
    var pending: [Message] = []
    var failed: [Message] = []
    // Pending and failed lists are ascending by `createdAt`: an insertion goes after the
    // messages of the same millisecond (the succeeded list is sorted at the end).
    func apply(_ action: MessageEventAction, _ messages: [Message], to list: inout [Message], id: (Message) -> String) {
        switch action {
        case .insert: for message in messages { list.insertInCreationOrder(message) }
        case .update:
            for message in messages {
                if let index = list.firstIndex(where: { id($0) == id(message) }) { list[index] = message }
            }
        case .remove: list.removeAll { existing in messages.contains { id($0) == id(existing) } }
        case .clear: list.removeAll()
        }
    }
    for event in events {
        switch event {
        case .succeeded(let action, let messages): apply(action, messages, to: &succeeded) { String($0.messageId) }
        case .pending(let action, let messages): apply(action, messages, to: &pending) { $0.reqId }
        case .failed(let action, let messages, _): apply(action, messages, to: &failed) { $0.reqId }
        default: break
        }
    }
    succeeded.sort { $0.sortKey < $1.sortKey }
    return (succeeded, pending, failed)
}

/// A collection under a model-based test, with its recorder and filter.
struct ModelSubject {
    let collection: MessageCollection
    let recorder: EventRecorder
    let filter: MessageFilter
    static let unreadEventLimit = 40

    /// Opens a collection with a recorder, its pending and failed lists loaded, as the
    /// model-based tests and soaks watch them.
    static func open(
        _ manager: SyncManager, channelURL: String = Harness.channel, filter: MessageFilter, viewpoint: Int64 = .max,
        limit: Int
    ) async throws -> ModelSubject {
        // Small, so that collections that leave `events` unread reach it (see FurtherConsumers).
        await manager.engine.setUnreadEventLimit(ModelSubject.unreadEventLimit)
        let collection = try await manager.messageCollection(
            channelURL: channelURL, filter: filter, viewpoint: viewpoint, limit: limit)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        try await collection.fetchPendingMessages()
        try await collection.fetchFailedMessages()
        await recorder.attachConsumers(to: collection)
        return ModelSubject(collection: collection, recorder: recorder, filter: filter)
    }
}

/// Checks the guarantees of Sources/ChatSync/ChatSync.docc/Guarantees.md (Collection events) on a collection; answers its
/// succeeded list. A generator passes `context` (its seed, step and log) so that a failure
/// names the schedule that replays it.
@discardableResult
func checkInvariants(
    _ collection: MessageCollection, _ recorder: EventRecorder, context: String = "",
    sourceLocation: SourceLocation = #_sourceLocation
) async -> [Message] {
    let succeeded = await collection.succeededMessages
    let pending = await collection.pendingMessages
    let failed = await collection.failedMessages
    let replayed = recorder.replay()
    #expect(replayed.succeeded == succeeded, "replaying succeeded events gives the snapshot \(context)", sourceLocation: sourceLocation)
    #expect(
        replayed.pending.map(\.reqId).sorted() == pending.map(\.reqId).sorted(),
        "replaying pending events gives the snapshot \(context)", sourceLocation: sourceLocation)
    #expect(
        replayed.failed.map(\.reqId).sorted() == failed.map(\.reqId).sorted(),
        "replaying failed events gives the snapshot \(context)", sourceLocation: sourceLocation)
    #expect(succeeded == succeeded.sorted { $0.sortKey < $1.sortKey }, "sorted \(context)", sourceLocation: sourceLocation)
    #expect(Set(succeeded.map(\.messageId)).count == succeeded.count, "no duplicates \(context)", sourceLocation: sourceLocation)
    let identities = succeeded.map { $0.reqId.isEmpty ? "id:\($0.messageId)" : $0.reqId } + pending.map(\.reqId) + failed.map(\.reqId)
    let twice = Dictionary(grouping: identities, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
    #expect(
        twice.isEmpty,
        "never in two lists: \(twice) in succeeded \(succeeded.filter { twice.contains($0.reqId) }) pending \(pending.filter { twice.contains($0.reqId) }) failed \(failed.filter { twice.contains($0.reqId) }) \(context)",
        sourceLocation: sourceLocation)
    let inFlight = recorder.removedForLimitsWhileNotFailed
    #expect(
        inFlight.isEmpty, "the failed list's limits removed a message being resent: \(inFlight) \(context)",
        sourceLocation: sourceLocation)
    let wentBack = recorder.versionsShownGoingBack
    #expect(
        wentBack.isEmpty, "a message shown in an older version after a newer one: \(wentBack) \(context)",
        sourceLocation: sourceLocation)
    let capacity = await collection.engine.options.messageCollectionCapacity
    #expect(succeeded.count <= capacity, "a view holds at most its capacity, \(capacity) \(context)", sourceLocation: sourceLocation)
    if let consumers = recorder.consumers.withLock({ $0 }) {
        await consumers.check(
            against: (succeeded, pending, failed), handled: recorder.events, context: context, sourceLocation: sourceLocation)
    }
    return succeeded
}

/// The server's messages matching `filter` from `first` to `last` (inclusive), in order.
func serverRange(_ all: [Message], _ filter: MessageFilter, from first: Message?, to last: Message?) -> [Message] {
    guard let first, let last else { return [] }
    return all.filter { filter.matches($0) && $0.sortKey >= first.sortKey && $0.sortKey <= last.sortKey }
}

extension Harness {
    /// Goes online, caches the channel's newest messages as one range (a view of `limit`
    /// fetched once and closed), then takes the user offline again and settles.
    func cacheNewestRangeThenGoOffline(limit: Int) async throws {
        let warm = try await manager.messageCollection(channelURL: Harness.channel, limit: limit)
        await online()
        _ = try await warm.fetchSucceededMessages(.previous)
        await warm.remove()
        await server.setOnline(false, for: userId)
        await settle()
    }
}

extension Harness {
    /// No lies: every complete range of `channelURL` holds every message the server has
    /// inside it (eviction tests, and the model's trims).
    func expectChunksAreTrue(
        _ channelURL: String, context: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let store = manager.engine.store
        for chunk in try store.chunks(channelURL: channelURL) {
            for message in await server.messages(in: channelURL) where chunk.contains(message.sortKey) {
                #expect(
                    try store.message(channelURL: channelURL, messageId: message.messageId) != nil,
                    "range \(chunk.start)...\(chunk.end) of \(channelURL) claims \(message.messageId), which is not cached \(context)",
                    sourceLocation: sourceLocation)
            }
        }
    }
}
