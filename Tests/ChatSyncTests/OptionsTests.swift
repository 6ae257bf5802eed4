import Testing

@testable import ChatSync

@Suite("Options", .capturingLogs)
struct OptionsTests {
    @Test func defaultsAreTheDocumentedOnes() throws {
        let options = SyncManagerOptions()
        #expect(options.messageCollectionCapacity == 1000)
        #expect(options.messageResendPolicy == .manual)
        #expect(options.automaticMessageResendRetryCount == 10)
        #expect(options.maxFailedMessageCountPerChannel == 20)
        #expect(options.failedMessageRetentionDays == 7)
        #expect(options.sendRetryLimit == 3)
        #expect(options.sendRetryInterval == .seconds(5))
        #expect(options.syncBatchSize == 100)
        #expect(options.hugeGapThreshold == 300)
        #expect(options.messageStoreCapacity == nil)
        try options.validate()
    }

    static let outOfRange: [(String, @Sendable (inout SyncManagerOptions) -> Void)] = [
        ("capacity 199", { $0.messageCollectionCapacity = 199 }),
        ("resend count 0", { $0.automaticMessageResendRetryCount = 0 }),
        ("resend count 51", { $0.automaticMessageResendRetryCount = 51 }),
        ("failed count 0", { $0.maxFailedMessageCountPerChannel = 0 }),
        ("retention 0", { $0.failedMessageRetentionDays = 0 }),
        ("retry limit -1", { $0.sendRetryLimit = -1 }),
        ("retry interval negative", { $0.sendRetryInterval = .seconds(-1) }),
        ("batch 0", { $0.syncBatchSize = 0 }),
        ("batch 1001", { $0.syncBatchSize = 1001 }),
        ("gap 0", { $0.hugeGapThreshold = 0 }),
        ("store capacity below view capacity", { $0.messageStoreCapacity = 500 }),
    ]

    @Test(arguments: 0..<outOfRange.count)
    func outOfRangeOptionsThrowInvalidParameterAtInit(_ index: Int) async throws {
        let (name, change) = Self.outOfRange[index]
        var options = SyncManagerOptions()
        change(&options)
        let code = await errorCode {
            _ = try await SyncManager(userId: "u", service: NeverService(), databasePath: nil, options: options)
        }
        #expect(code == .invalidParameter, "\(name)")
    }

    @Test func edgesOfTheRangesAreAccepted() async throws {
        var options = SyncManagerOptions()
        options.messageCollectionCapacity = 200
        options.automaticMessageResendRetryCount = 50
        options.sendRetryLimit = 0
        options.messageStoreCapacity = 200
        let manager = try await SyncManager(userId: "u", service: NeverService(), databasePath: nil, options: options)
        await manager.close()
    }
}

/// A service that is never reached: the lifecycle tests that use it touch no network.
struct NeverService: ChatService {
    struct Unreachable: Error {}
    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage { throw Unreachable() }
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs { throw Unreachable() }
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] { throw Unreachable() }
    func sendMessage(_ request: SendMessageRequest) async throws -> Message { throw Unreachable() }
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        throw Unreachable()
    }
    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        throw Unreachable()
    }
    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws { throw Unreachable() }
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage { throw Unreachable() }
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs { throw Unreachable() }
    func events() async -> AsyncStream<ServiceEvent> {
        AsyncStream { $0.yield(.connectionChanged(.offline)) }
    }
}
