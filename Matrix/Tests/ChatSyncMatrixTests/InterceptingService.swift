import ChatSync
import Foundation
import Synchronization

/// Forwards every call to a real service, except that each send goes through `send`,
/// which can lose its answer or hold it back after the real call, and that real-time
/// events for which `drops` holds never arrive.
final class InterceptingService: ChatService {
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
    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage { try await base.fetchMessages(query) }
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
    }
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await base.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
    }
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        try await base.uploadFile(request, progress: progress)
    }
    func updateMessage(channelURL: String, messageId: Int64, text: String) async throws -> Message {
        try await base.updateMessage(channelURL: channelURL, messageId: messageId, text: text)
    }
    func deleteMessage(channelURL: String, messageId: Int64) async throws {
        try await base.deleteMessage(channelURL: channelURL, messageId: messageId)
    }
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage { try await base.fetchChannels(query) }
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await base.channelChangeLogs(token: token, limit: limit)
    }
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

/// Seeded randomness (splitmix64), so that a schedule that fails replays: numbers, and
/// a coin that comes up heads with probability `rate`.
final class SeededRandom: Sendable {
    let rate: Double
    private let state: Mutex<(random: UInt64, heads: Int)>

    init(seed: UInt64, rate: Double = 0.5) {
        self.rate = rate
        state = Mutex((seed, 0))
    }

    /// How many tosses came up heads.
    var heads: Int { state.withLock { $0.heads } }

    /// The next number in 0..<2^64.
    func next() -> UInt64 {
        state.withLock { state in
            state.random &+= 0x9E37_79B9_7F4A_7C15
            var z = state.random
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The next number in 0..<bound.
    func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// Tosses the coin: heads with probability `rate`.
    func toss() -> Bool {
        let heads = Double(next() >> 11) / Double(1 << 53) < rate
        if heads { state.withLock { $0.heads += 1 } }
        return heads
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
