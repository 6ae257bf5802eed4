import ChatSync
import ChatSyncTesting
import Foundation
import Testing

@testable import ChatServerClient

/// Seeded fuzzing of the HTTP client's decoding: valid server answers and events,
/// mutated (values of the wrong type, huge strings, negative, zero, huge and duplicate
/// ids, unknown enum values, missing and extra keys, truncation, flipped bytes). Every
/// input must decode or be refused as a transient bad response, never crash; the
/// answers that still decode are then served to a real `SyncManager`, whose views must
/// stay sorted, free of duplicates and inside their channel.
///
/// `DECODE_FUZZ_CASES=N` runs N inputs (4,000 by default), `DECODE_FUZZ_SEED=N` others.
@Suite("Decoding fuzz")
struct DecodingFuzzTests {
    static let environment = ProcessInfo.processInfo.environment
    static let cases = environment["DECODE_FUZZ_CASES"].flatMap(Int.init) ?? 4_000
    static let seed = environment["DECODE_FUZZ_SEED"].flatMap(UInt64.init) ?? 1

    static func message(_ id: Int64, at createdAt: Int64, kind: MessageKind = .text) -> Message {
        Message(
            messageId: id, reqId: id % 2 == 0 ? "r\(id)" : "", channelURL: "general", senderId: "bob", kind: kind, text: "m\(id)",
            file: kind == .image ? FileInfo(name: "p.png", mimeType: "image/png", size: 10, url: "http://x/p.png") : nil,
            createdAt: createdAt)
    }

    static let page = MessagePage(
        messages: (1...6).map { message($0, at: 1_000 + $0, kind: $0 == 3 ? .image : .text) }, hasPrev: true, hasNext: false)

    /// Valid answers of every kind the client reads, with a decoder for each.
    static let samples: [(name: String, json: Data, decode: @Sendable (Data) throws -> Void)] = {
        let encoder = JSONEncoder()
        func sample<T: Codable & Sendable>(_ name: String, _ value: T) -> (String, Data, @Sendable (Data) throws -> Void) {
            (name, (try? encoder.encode(value)) ?? Data(), { _ = try HTTPChatService.decode(T.self, from: $0, answering: name) })
        }
        let channel = Channel(
            channelURL: "general", name: "General", memberIds: ["alice", "bob"], createdAt: 1, lastMessage: message(9, at: 1_009))
        return [
            sample("page", page),
            sample("message", message(7, at: 1_007, kind: .image)),
            sample("look-up", [message(2, at: 1_002), message(4, at: 1_004)]),
            sample(
                "change logs", MessageChangeLogs(updated: [message(5, at: 1_005)], deletedMessageIds: [1, 2], token: "t9", hasMore: false)),
            sample("channels", ChannelPage(channels: [channel], nextCursor: "c1")),
            sample("channel change logs", ChannelChangeLogs(updated: [channel], deletedChannelURLs: ["old"], token: "t1", hasMore: true)),
            sample("file", FileInfo(name: "a.bin", mimeType: "application/octet-stream", size: 5, url: "http://x/a")),
            sample("event: message", ServiceEvent.messageReceived(message(8, at: 1_008))),
            sample("event: deleted", ServiceEvent.messageDeleted(channelURL: "general", messageId: 3)),
            sample("event: connection", ServiceEvent.connectionChanged(.online)),
            sample("event: channel", ServiceEvent.channelChanged(channel)),
        ]
    }()

    @Test func hostileAnswersDecodeOrAreRefusedNeverCrash() throws {
        var random = SeededGenerator(seed: Self.seed)
        var (decoded, refused) = (0, 0)
        for index in 0..<Self.cases {
            let sample = Self.samples[index % Self.samples.count]
            let input = JSONMutator.mutate(sample.json, using: &random)
            do {
                try sample.decode(input)
                decoded += 1
            } catch let error as ChatServiceError {
                #expect(error.code == .badResponse && error.isTransient, "case \(index) (\(sample.name)): \(error)")
                refused += 1
            }
        }
        print("Decoding fuzz: \(Self.cases) inputs, \(decoded) decoded, \(refused) refused as bad responses")
        #expect(
            decoded > Self.cases / 20 && refused > Self.cases / 20, "both outcomes were exercised: \(decoded) decoded, \(refused) refused")
    }

    @Test func hostilePagesThatDecodeLeaveViewsConsistent() async throws {
        var random = SeededGenerator(seed: Self.seed &+ 1)
        var pages: [MessagePage] = []
        let json = try JSONEncoder().encode(Self.page)
        while pages.count < max(10, Self.cases / 8) {
            let input = JSONMutator.mutate(json, using: &random)
            if let page = try? HTTPChatService.decode(MessagePage.self, from: input, answering: "page") { pages.append(page) }
        }
        let service = PageReplayService(pages: pages)
        let manager = try await SyncManager(userId: "alice", service: service, databasePath: nil)
        await manager.resumeSync()
        var served = 0
        while await service.remaining > 0 {
            let collection = try await manager.messageCollection(channelURL: "general", limit: 4)
            for _ in 0..<6 {
                let direction: Direction = Bool.random(using: &random) ? .previous : .next
                _ = try? await collection.fetchSucceededMessages(direction)
                let succeeded = await collection.succeededMessages
                #expect(succeeded.map(\.sortKey) == succeeded.map(\.sortKey).sorted(), "sorted")
                #expect(Set(succeeded.map(\.messageId)).count == succeeded.count, "no duplicates")
                #expect(succeeded.allSatisfy { $0.channelURL == "general" && $0.messageId > 0 }, "only well-formed messages of the channel")
            }
            await collection.remove()
            served += 1
        }
        print("Decoding fuzz: \(pages.count) hostile pages that decode served to a SyncManager")
        #expect(served > 0)
        await manager.close()
    }
}

/// Serves fetches from a list of pages (decoded from mutated JSON), one each; the rest
/// of the service is a quiet, online server.
actor PageReplayService: ChatService {
    private var pages: [MessagePage]
    init(pages: [MessagePage]) { self.pages = pages }
    var remaining: Int { pages.count }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        guard !pages.isEmpty else { return MessagePage(messages: [], hasPrev: false, hasNext: false) }
        return pages.removeFirst()
    }
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        MessageChangeLogs(updated: [], deletedMessageIds: [], token: "t", hasMore: false)
    }
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] { [] }
    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        throw ChatServiceError.permanent(.invalid, "not in this test")
    }
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        throw ChatServiceError.permanent(.invalid, "not in this test")
    }
    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        throw ChatServiceError.permanent(.invalid, "not in this test")
    }
    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {}
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage { ChannelPage(channels: [], nextCursor: nil) }
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        ChannelChangeLogs(updated: [], deletedChannelURLs: [], token: "t", hasMore: false)
    }
    func events() async -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        continuation.yield(.connectionChanged(.online))
        return stream
    }
}

/// Mutates a JSON document: structurally (a node replaced by another type, a huge or
/// unknown value, a key dropped or added, an element doubled) or as bytes (truncated,
/// flipped, spliced).
enum JSONMutator {
    static func mutate(_ json: Data, using random: inout SeededGenerator) -> Data {
        if Int.random(in: 0..<5, using: &random) == 0 { return mutateBytes(json, using: &random) }
        guard let tree = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed]) else { return json }
        var mutated = tree
        for _ in 0...Int.random(in: 0...2, using: &random) { mutated = mutateTree(mutated, using: &random) }
        return (try? JSONSerialization.data(withJSONObject: mutated, options: [.fragmentsAllowed])) ?? json
    }

    private static func mutateBytes(_ json: Data, using random: inout SeededGenerator) -> Data {
        var bytes = [UInt8](json)
        guard !bytes.isEmpty else { return json }
        switch Int.random(in: 0..<3, using: &random) {
        case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &random)))
        case 1:
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
        default:
            bytes.insert(
                contentsOf: Array("\u{0}\"}]{[".utf8).shuffled(using: &random), at: Int.random(in: 0...bytes.count, using: &random))
        }
        return Data(bytes)
    }

    /// A value that does not belong where it is put.
    private static func hostileValue(using random: inout SeededGenerator) -> Any {
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return NSNull()
        case 1: return String(repeating: "x", count: Int.random(in: 10_000...200_000, using: &random))
        case 2: return -Int.random(in: 1...1_000_000, using: &random)
        case 3: return 0
        case 4: return Int64.max
        case 5: return 1e300
        case 6: return ["sticker", "GIF", "", "deleted", "🙂"].randomElement(using: &random)!
        case 7: return true
        case 8: return [1, "two", NSNull()] as [Any]
        case 9: return ["unexpected": ["nested": 1]]
        case 10: return Int64.min
        default: return 0.5
        }
    }

    private static func mutateTree(_ node: Any, using random: inout SeededGenerator) -> Any {
        if var object = node as? [String: Any], !object.isEmpty {
            let key = object.keys.sorted().randomElement(using: &random)!
            switch Int.random(in: 0..<5, using: &random) {
            case 0: object[key] = nil
            case 1: object["extra\(Int.random(in: 0..<9, using: &random))"] = hostileValue(using: &random)
            case 2: object[key] = hostileValue(using: &random)
            default: object[key] = mutateTree(object[key]!, using: &random)
            }
            return object
        }
        if var array = node as? [Any], !array.isEmpty {
            let index = Int.random(in: 0..<array.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: array.insert(array[index], at: Int.random(in: 0...array.count, using: &random))  // a duplicate
            case 1: array.swapAt(index, Int.random(in: 0..<array.count, using: &random))  // out of order
            case 2: array[index] = hostileValue(using: &random)
            default: array[index] = mutateTree(array[index], using: &random)
            }
            return array
        }
        // A leaf: usually a nearby value of the same type (negative, zero, huge, shifted), sometimes anything.
        if let number = node as? Int, Int.random(in: 0..<3, using: &random) > 0 {
            return [-number, 0, number + 1, number * 1_000_003, -1].randomElement(using: &random)!
        }
        return hostileValue(using: &random)
    }
}
