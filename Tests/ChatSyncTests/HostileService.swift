import ChatSyncTesting
import Foundation

@testable import ChatSync

/// Wraps a service and, at a seeded rate, corrupts what it answers in ways JSON
/// decoding lets through: negative, zero or duplicate ids, another channel, messages out
/// of order or far outside the range asked for, failure fields set on stored messages,
/// huge strings, another request id, garbage change logs and real-time events.
/// The request itself is applied unchanged, as with a broken proxy or a buggy backend.
actor HostileService: ChatService {
    let inner: any ChatService
    private var random: SeededGenerator
    /// The share of answers corrupted.
    var rate: Double
    /// What was corrupted, for a failing seed's message.
    private(set) var corruptions: [String] = []
    /// Events added to the newest subscription's stream, for ``Harness/settle(extraEvents:sourceLocation:)``.
    private(set) var addedEvents = 0
    private var generation = 0
    private var current: AsyncStream<ServiceEvent>.Continuation?
    /// Rewrites the next send answers, one each, before any random corruption.
    private var sendRewrites: [@Sendable (Message) -> Message] = []

    func rewriteNextSend(_ rewrite: @escaping @Sendable (Message) -> Message) { sendRewrites.append(rewrite) }

    /// Rewrites the answers to the next fetches, one each, before any random corruption.
    private var pageRewrites: [@Sendable (MessagePage) -> MessagePage] = []
    func rewriteNextPage(_ rewrite: @escaping @Sendable (MessagePage) -> MessagePage) { pageRewrites.append(rewrite) }

    /// Puts a crafted event on the newest subscription's stream.
    func inject(_ event: ServiceEvent) {
        addedEvents += 1
        current?.yield(event)
    }

    init(_ inner: any ChatService, seed: UInt64, rate: Double) {
        self.inner = inner
        random = SeededGenerator(seed: seed)
        self.rate = rate
    }

    func setRate(_ rate: Double) { self.rate = rate }

    private func roll() -> Bool { Double.random(in: 0..<1, using: &random) < rate }
    private func pick(_ count: Int) -> Int { Int.random(in: 0..<count, using: &random) }

    /// One message, corrupted one way.
    private func corrupt(_ message: Message) -> Message {
        var bad = message
        let kind = pick(9)
        corruptions.append("  message #\(kind) of \(message.messageId)/\(message.reqId.prefix(4))")
        switch kind {
        case 0: bad.messageId = -Int64(pick(1000)) - 1
        case 1: bad.messageId = 0
        case 2: bad.channelURL = ["elsewhere", "", "general/../x"][pick(3)]
        case 3: bad.createdAt = [Int64.min, -1, 0, Int64.max, message.createdAt + 10_000_000][pick(5)]
        case 4:
            bad.syncState = [.failed, .created, .syncing][pick(3)]
            bad.failure = SyncFailure(code: 500, message: "x", isRetryable: true)
        case 5: bad.text = String(repeating: "Ω", count: 100_000 + pick(100_000))
        case 6: bad.reqId = "not-\(message.reqId)-\(pick(100))"
        case 7: bad.updatedAt = Int64.min
        default: bad.uploadProgress = Double.nan
        }
        return bad
    }

    private func corrupt(_ messages: [Message], what: String) -> [Message] {
        guard roll(), !messages.isEmpty || pick(2) == 0 else { return messages }
        var bad = messages
        let kind = pick(5)
        switch kind {
        case 0: bad.shuffle(using: &random)
        case 1: if let any = bad.randomElement(using: &random) { bad.insert(any, at: pick(bad.count + 1)) }
        case 2: bad.append(corrupt(Message(channelURL: "general", senderId: "mallory", createdAt: Int64(pick(1_000_000)))))
        default:
            if !bad.isEmpty {
                let index = pick(bad.count)
                bad[index] = corrupt(bad[index])
            }
        }
        corruptions.append("\(what) #\(kind)")
        return bad
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        var page = try await inner.fetchMessages(query)
        if !pageRewrites.isEmpty { return pageRewrites.removeFirst()(page) }
        page.messages = corrupt(page.messages, what: "page")
        return page
    }

    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        var logs = try await inner.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
        logs.updated = corrupt(logs.updated, what: "change logs")
        if roll() {
            logs.deletedMessageIds += [-1, 0, Int64.max, Int64(pick(50))]
            corruptions.append("change logs delete garbage")
        }
        return logs
    }

    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        corrupt(try await inner.lookUpMessages(channelURL: channelURL, reqIds: reqIds), what: "look-up")
    }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        let sent = try await inner.sendMessage(request)
        if !sendRewrites.isEmpty { return sendRewrites.removeFirst()(sent) }
        guard roll() else { return sent }
        corruptions.append("send answer")
        return corrupt(sent)
    }

    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        var file = try await inner.uploadFile(request) { progress($0) }
        if roll() {
            corruptions.append("upload answer")
            file.size = -1
            file.url = ""
        }
        return file
    }

    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        let edited = try await inner.updateMessage(channelURL: channelURL, messageId: messageId, text: text, operationId: operationId)
        guard roll() else { return edited }
        corruptions.append("edit answer")
        return corrupt(edited)
    }

    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        try await inner.deleteMessage(channelURL: channelURL, messageId: messageId, operationId: operationId)
    }

    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage {
        try await inner.fetchChannels(query)
    }

    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await inner.channelChangeLogs(token: token, limit: limit)
    }

    /// Real-time events pass through, with corrupted copies of message events mixed in.
    func events() async -> AsyncStream<ServiceEvent> {
        let upstream = await inner.events()
        addedEvents = 0
        generation += 1
        let current = generation
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        self.current = continuation
        // Not isolated to this actor (self is weak), so the iterator never crosses isolation.
        Task { [weak self, upstream] in
            for await event in upstream {
                for item in await self?.pass(event, generation: current) ?? [event] { continuation.yield(item) }
            }
            continuation.finish()
        }
        return stream
    }

    private func pass(_ event: ServiceEvent, generation: Int) -> [ServiceEvent] {
        // An older subscription's events reach no manager: leave them alone.
        guard generation == self.generation, roll() else { return [event] }
        switch event {
        case .messageReceived(let message):
            corruptions.append("event received")
            addedEvents += 1
            return [.messageReceived(corrupt(message)), event]
        case .messageUpdated(let message):
            corruptions.append("event updated")
            addedEvents += 1
            return [.messageUpdated(corrupt(message)), event]
        case .messageDeleted(let channelURL, _):
            corruptions.append("event deleted")
            addedEvents += 1
            return [.messageDeleted(channelURL: channelURL, messageId: -Int64(pick(10))), event]
        default:
            return [event]
        }
    }
}
