import ChatSyncTesting
import Clocks
import Foundation
import Testing

@testable import ChatSync

/// Waits until something sleeps on `clock`, so the test moves time only once the sleep's
/// deadline is set (a sleep registered after the clock moved would wait for a later move).
func sleeperRegistered(on clock: TestClock<Duration>) async -> Bool {
    await eventually {
        do {
            try await clock.checkSuspension()
            return false
        } catch {
            return true
        }
    }
}

/// Waits until a retry sleeps on `clock` or the engine has no background work left, and
/// answers whether a retry waits: a loop that moves the clock stops once the chain ended.
func aRetryWaits(on clock: TestClock<Duration>, _ engine: SyncEngine) async -> Bool {
    let settled = await eventually {
        do {
            try await clock.checkSuspension()
            return await engine.backgroundTaskCount == 0
        } catch {
            return true  // a retry sleeps on the clock
        }
    }
    guard settled else { return false }
    return await engine.backgroundTaskCount > 0
}

/// A wall clock the test moves by hand.
final class ManualTime: Sendable {
    private let value = LockedState<Int64>(1_800_000_000_000)
    var now: Int64 { value.withLock { $0 } }
    func advance(days: Int) { value.withLock { $0 += Int64(days) * 86_400_000 } }
    var source: @Sendable () -> Int64 { { [self] in now } }
}

/// Writes a small file to attach to media messages.
func makeAttachment(in dir: TemporaryDirectory, _ name: String = "photo.png", bytes: Int = 2_048) throws -> String {
    let path = dir.path(name)
    try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
    return path
}

/// Wraps a service so a test can hold send responses (the request is applied, the
/// answer waits) or hold real-time events (they queue until released).
actor ControlledService: ForwardingChatService {
    nonisolated let base: any ChatService
    private var holdingResponses = false
    private var heldResponses: [CheckedContinuation<Void, Never>] = []
    private var holdingEvents = false
    private var bufferedEvents: [ServiceEvent] = []
    private var downstream: AsyncStream<ServiceEvent>.Continuation?
    private(set) var forwardedEvents = 0
    /// Like a WebSocket client: report `.connecting` first and hold the connection
    /// until ``finishConnecting()``.
    private var connecting: Bool
    private var connected: [CheckedContinuation<Void, Never>] = []

    init(_ inner: any ChatService, startsConnecting: Bool = false) {
        self.base = inner
        connecting = startsConnecting
    }

    func finishConnecting() {
        connecting = false
        for waiter in connected { waiter.resume() }
        connected.removeAll()
    }

    private func waitUntilConnected() async {
        guard connecting else { return }
        await withCheckedContinuation { connected.append($0) }
    }

    func holdResponses() { holdingResponses = true }
    func releaseResponses() {
        holdingResponses = false
        let waiting = heldResponses
        heldResponses.removeAll()
        for response in waiting { response.resume() }
    }
    var heldResponseCount: Int { heldResponses.count }

    func holdEvents() { holdingEvents = true }
    func releaseEvents() {
        holdingEvents = false
        for event in bufferedEvents { downstream?.yield(event) }
        bufferedEvents.removeAll()
    }
    var bufferedEventCount: Int { bufferedEvents.count }

    private func forward(_ event: ServiceEvent) {
        forwardedEvents += 1
        if holdingEvents { bufferedEvents.append(event) } else { downstream?.yield(event) }
    }

    func events() async -> AsyncStream<ServiceEvent> {
        let upstream = await base.events()
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        downstream = continuation
        var iterator = upstream.makeAsyncIterator()
        if connecting {
            continuation.yield(.connectionChanged(.connecting))
            // Not isolated to this actor (self is weak), so the iterator never crosses isolation.
            Task { [weak self, iterator] in
                var iterator = iterator
                await self?.waitUntilConnected()
                while let event = await iterator.next() { await self?.forward(event) }
            }
            return stream
        }
        if let first = await iterator.next() { continuation.yield(first) }
        Task { [weak self, iterator] in
            var iterator = iterator
            while let event = await iterator.next() { await self?.forward(event) }
        }
        return stream
    }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        let sent = try await base.sendMessage(request)
        if holdingResponses { await withCheckedContinuation { heldResponses.append($0) } }
        return sent
    }
}

extension Harness {
    /// The outbox as it stands, in creation order.
    func outbox() throws -> [OutboxEntry] { try manager.engine.store.outboxEntries() }

    /// The end of a model-based schedule: resends every failed message (only the
    /// retryable ones when `retryableOnly`) and settles, three rounds, so that what can
    /// still reach the server does.
    func resendFailedAndSettle(retryableOnly: Bool, extraEvents: (() async -> Int)? = nil) async throws {
        for _ in 0..<3 {
            // The host resends its own messages through its SDK (Guarantees: Host-sent messages): the app cannot.
            for entry in try outbox() where entry.message.syncState == .failed && entry.origin == .outbox {
                guard !retryableOnly || entry.message.failure?.isRetryable == true else { continue }
                do {
                    _ = try await manager.resendMessage(reqId: entry.reqId)
                } catch let error as SyncManagerError where error.code == .invalidParameter {
                    // The snapshot is older than the engine: meanwhile a page or an echo may
                    // have resolved the message, or a limit dropped it. Only then is a refusal right.
                    let now = try manager.engine.store.outboxEntry(reqId: entry.reqId)
                    if now?.message.syncState == .failed { throw error }
                }
            }
            await settle(extraEvents: extraEvents)
        }
    }

    /// Every state `observeMessage` reports for `reqId` until it finishes.
    func states(of reqId: String) -> Task<[SyncState], Never> {
        let stream = manager.observeMessage(reqId: reqId)
        return Task {
            var states: [SyncState] = []
            for await message in stream where states.last != message.syncState { states.append(message.syncState) }
            return states
        }
    }
}

extension SyncManagerOptions {
    /// The settings the outbox model test and the soak share: a resend policy, a random
    /// batch size and retry limit (drawn in that order, so seeds keep their schedules), and
    /// limits high enough that only the schedule decides what fails.
    mutating func applyScheduleSettings(policy: MessageResendPolicy, using random: inout SeededGenerator) {
        messageResendPolicy = policy
        syncBatchSize = Int.random(in: 2...10, using: &random)
        sendRetryLimit = Int.random(in: 0...3, using: &random)
        maxFailedMessageCountPerChannel = 1000
        hugeGapThreshold = 40
        messageCollectionCapacity = 200
    }

    /// In half the schedules, a failed list of one to three messages per channel, so that
    /// the count limit drops messages while others fail and are resent; `nil` (the high
    /// limit of `applyScheduleSettings`) in the others. Drawn from a generator of its own,
    /// so that each seed's other draws stay what they were.
    static func failedListCap(using random: inout SeededGenerator) -> Int? {
        Bool.random(using: &random) ? Int.random(in: 1...3, using: &random) : nil
    }
}

extension Harness {
    /// Brings alice online and opens a collection, with its recorder, at the channel's
    /// newest messages: the channel is live, so an answer that comes before its echo waits for it.
    func collectionAtTheNewestMessages(limit: Int = 50) async throws -> (MessageCollection, EventRecorder) {
        await online()
        let collection = try await manager.messageCollection(channelURL: Harness.channel, limit: limit)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        return (collection, recorder)
    }
}
