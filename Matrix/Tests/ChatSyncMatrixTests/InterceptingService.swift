import ChatSync
import ChatSyncTesting
import Foundation
import Synchronization

/// Forwards every call to a real service, except that each send goes through `send`,
/// which can lose its answer or hold it back after the real call, and that real-time
/// events for which `drops` holds never arrive.
final class InterceptingService: ForwardingChatService {
    typealias Send = @Sendable (SendMessageRequest, any ChatService) async throws -> Message
    let base: any ChatService
    let send: Send
    let drops: @Sendable (ServiceEvent) -> Bool

    init(_ base: any ChatService, drops: @escaping @Sendable (ServiceEvent) -> Bool = { _ in false }, send: @escaping Send) {
        self.base = base
        self.drops = drops
        self.send = send
    }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message { try await send(request, base) }
    func events() async -> AsyncStream<ServiceEvent> {
        let events = await base.events()
        let drops = drops
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        let forward = Task {
            for await event in events where !drops(event) { continuation.yield(event) }
            continuation.finish()
        }
        continuation.onTermination = { _ in forward.cancel() }
        return stream
    }
}

/// ChatSyncTesting's seeded generator, shareable between tasks: numbers, and a coin
/// that comes up heads with probability `rate`. A schedule that fails replays.
final class SeededRandom: Sendable {
    let rate: Double
    private let state: Mutex<(generator: SeededGenerator, heads: Int)>

    init(seed: UInt64, rate: Double = 0.5) {
        self.rate = rate
        state = Mutex((SeededGenerator(seed: seed), 0))
    }

    /// How many tosses came up heads.
    var heads: Int { state.withLock { $0.heads } }

    /// The next number in 0..<bound.
    func next(below bound: Int) -> Int { state.withLock { Int.random(in: 0..<bound, using: &$0.generator) } }

    /// Tosses the coin: heads with probability `rate`.
    func toss() -> Bool {
        state.withLock { state in
            let heads = state.generator.chance(rate)
            if heads { state.heads += 1 }
            return heads
        }
    }
}

/// A latch the test opens: sends that wait on it hold their answers until then (or
/// until their task is cancelled, as closing a manager does).
final class Latch: Sendable {
    private let isOpen = Mutex(false)

    func open() { isOpen.withLock { $0 = true } }

    func wait() async throws {
        while !isOpen.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
    }
}
