import ChatSyncTesting
import Foundation
import Logging
import Testing

@testable import ChatSync

/// An app that closes its manager at any moment: while a fetch, a send, an upload, an
/// edit, a reconciliation look-up, a channel page or a change-log request is out, with
/// the request either not yet sent or its answer arriving after the close. In-memory
/// caches in half the schedules (GRDB crashes on a closed in-memory queue instead of
/// throwing, so any store access after the close shows), a file in the other half,
/// relaunched afterwards.
///
/// Checked: no crash and no hang; every call the app begins after the close throws
/// ``SyncManagerError/Code/closed``; and on a file, after the relaunch drains the
/// outbox, every message whose `sendMessage` returned is on the server exactly once.
/// Found: a trim set off just before the close counted the closed in-memory cache and
/// crashed the process.
@Suite("Closing mid-work, generated", .capturingLogs)
struct CloseMidWorkGeneratedTests {
    static let seeds = ScheduleSeeds.closeMidWork

    @Test(arguments: 0..<4)
    func closingAtAnyMomentLosesNothingAndCrashesNothing(batch: Int) async {
        await Self.seeds.run(batch: batch, of: 4) { seed in try await Self.schedule(seed) }
    }

    private static func schedule(_ seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let onFile = Bool.random(using: &random)
        var (harness, closer) = try await Harness.makeWrapped(
            seed: seed, databasePath: onFile ? dir.path("cache.sqlite") : nil,
            configure: {
                $0.messageStoreCapacity = Int.random(in: 0..<3, using: &random) == 0 ? nil : 200
                $0.messageCollectionCapacity = 200
                $0.syncBatchSize = Int.random(in: 1...12, using: &random)
                $0.logger = Logger(label: "close-\(seed)")
            },
            wrapper: ClosingOnRequest.init(base:))
        let server = harness.server
        try await server.createChannel("side", members: ["alice", "bob"], name: "side")
        for index in 0..<Int.random(in: 0...500, using: &random) {
            let channel = index % 3 == 0 ? "side" : Harness.channel
            try await server.post(.text("h\(index)"), from: index % 4 == 0 ? "alice" : "bob", to: channel)
        }
        await harness.online()
        let manager = harness.manager
        let countdown = Int.random(in: 0...40, using: &random)
        let afterAnswer = Bool.random(using: &random)
        await closer.arm(after: countdown, afterAnswer: afterAnswer) { await manager.close() }
        var log = ["file \(onFile), close at request \(countdown) \(afterAnswer ? "after its answer" : "before it is sent")"]
        var sent: [String] = []
        var deleted: Set<String> = []
        var collections: [MessageCollection] = []
        for step in 0..<30 {
            let closedBefore = await closer.closedBy != nil
            let channel = Bool.random(using: &random) ? Harness.channel : "side"
            var action = ""
            // Calls that cannot throw (remove, pause, resume) do nothing once closed.
            var throwsWhenClosed = true
            do {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<20:
                    action = "open \(channel)"
                    let filter = Bool.random(using: &random) ? MessageFilter() : MessageFilter(senderIds: ["alice"])
                    collections.append(
                        try await manager.messageCollection(
                            channelURL: channel, filter: filter, limit: Int.random(in: 1...40, using: &random)))
                case 20..<40:
                    guard let collection = collections.randomElement(using: &random) else { continue }
                    let direction: Direction = Bool.random(using: &random) ? .previous : .next
                    let pages = Int.random(in: 1...6, using: &random)
                    action = "fetch \(direction) \(pages)"
                    for _ in 0..<pages { _ = try await collection.fetchSucceededMessages(direction) }
                case 40..<58:
                    action = "send in \(channel)"
                    let params: MessageParams =
                        Int.random(in: 0..<4, using: &random) == 0
                        ? .file(.image, localPath: try makeAttachment(in: dir, "p\(step).png"), name: "p.png", mimeType: "image/png")
                        : .text("s\(step)")
                    sent.append(try await manager.sendMessage(params, channelURL: channel).reqId)
                case 58..<66:
                    let own = await server.messages(in: channel).filter { $0.senderId == "alice" }
                    guard let target = own.randomElement(using: &random) else { continue }
                    if Bool.random(using: &random) {
                        action = "edit \(target.messageId)"
                        _ = try await manager.updateMessage(messageId: target.messageId, channelURL: channel, text: "e\(step)")
                    } else {
                        action = "delete \(target.messageId)"
                        // Queued, it may yet land: what she deleted is not looked for.
                        deleted.insert(target.reqId)
                        try await manager.deleteMessage(messageId: target.messageId, channelURL: channel)
                    }
                case 66..<76:
                    action = "channel list"
                    let list = try await manager.channelCollection(query: ChannelListQuery(limit: Int.random(in: 1...5, using: &random)))
                    _ = try await list.fetch()
                    if Bool.random(using: &random) { await list.remove() }
                case 76..<84:
                    action = "bob posts"
                    throwsWhenClosed = false
                    for index in 0..<Int.random(in: 1...30, using: &random) {
                        try await server.post(.text("b\(step).\(index)"), from: "bob", to: channel)
                    }
                case 84..<90:
                    action = "offline and back"
                    throwsWhenClosed = false
                    await manager.pauseSync()
                    await manager.resumeSync()
                case 90..<95:
                    guard let collection = collections.randomElement(using: &random) else { continue }
                    action = "close a collection"
                    throwsWhenClosed = false
                    await collection.remove()
                    if Int.random(in: 0..<3, using: &random) == 0 {
                        // The app's last screen goes and the app closes the manager at once:
                        // the trim the removal set off may start after the close.
                        action += ", then the manager"
                        await closer.disarm()
                        await manager.close()
                        await closer.noteClosed(by: "the app, after closing a collection")
                    }
                default:
                    action = "settle"
                    throwsWhenClosed = false
                    await harness.settle()
                }
                log.append(action)
                #expect(!closedBefore || !throwsWhenClosed, "seed \(seed) step \(step): \(action) after the close succeeded; \(log)")
            } catch let error as SyncManagerError {
                log.append("\(action): \(error.code)")
                if closedBefore {
                    #expect(error.code == .closed, "seed \(seed) step \(step): \(action) after the close threw \(error); \(log)")
                }
            }
        }
        if await closer.closedBy == nil { await manager.close() }
        await closer.disarm()
        log.append("closed by \(await closer.closedBy ?? "the app")")
        await harness.settle()
        guard onFile else { return }
        // Relaunched, online: what was in flight is reconciled by reqId (found: succeeded;
        // not found: failed, retryable, API.md §4.5), and once the app resends the failed
        // ones (the default policy is manual), everything it sent is on the server once.
        try await harness.reopen()
        await harness.online()
        await harness.settle()
        let onServer = Set(await (server.messages(in: Harness.channel) + server.messages(in: "side")).compactMap(\.reqId))
        for entry in try harness.outbox() where entry.message.syncState == .failed {
            #expect(
                !onServer.contains(entry.reqId) && entry.message.failure?.isRetryable == true,
                "seed \(seed): \(entry.reqId) failed after the relaunch though the server has it, or for good; \(log)")
        }
        try await harness.resendFailedAndSettle(retryableOnly: true)
        let stored = await server.messages(in: Harness.channel) + server.messages(in: "side")
        for reqId in sent where !deleted.contains(reqId) {
            let copies = stored.count { $0.reqId == reqId }
            #expect(copies == 1, "seed \(seed): sent \(reqId) is on the server \(copies) times; \(log)")
        }
        let left = try harness.outbox().map {
            "\($0.reqId) \($0.message.syncState) \($0.message.failure.map { "\($0)" } ?? "") attempts \($0.attempts)"
        }
        #expect(left.isEmpty, "seed \(seed): the relaunch drained the outbox: \(left); \(log)")
        await harness.manager.close()
    }
}

/// Closes the manager at its `n`-th request, of any kind: before the request goes out
/// (the service never hears of it) or once its answer came back (the service has done
/// it, the engine hears of it after the close).
actor ClosingOnRequest: ForwardingChatService {
    nonisolated let base: any ChatService
    private var countdown: Int?
    private var afterAnswer = false
    private var close: (@Sendable () async -> Void)?
    /// The request the close came at, once it came.
    private(set) var closedBy: String?

    init(base: any ChatService) { self.base = base }

    func arm(after requests: Int, afterAnswer: Bool, close: @escaping @Sendable () async -> Void) {
        countdown = requests
        self.afterAnswer = afterAnswer
        self.close = close
    }

    func disarm() { countdown = nil }

    /// The app closed the manager itself.
    func noteClosed(by whom: String) { closedBy = closedBy ?? whom }

    private func tick(_ request: String, answered: Bool) async {
        guard answered == afterAnswer, let left = countdown else { return }
        guard left == 0 else {
            countdown = left - 1
            return
        }
        countdown = nil
        closedBy = request
        await close?()
    }

    private func around<T: Sendable>(_ request: String, _ call: () async throws -> T) async throws -> T {
        await tick(request, answered: false)
        let answer = try await call()
        await tick(request, answered: true)
        return answer
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        try await around("fetchMessages") { try await base.fetchMessages(query) }
    }
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try await around("messageChangeLogs") { try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit) }
    }
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await around("lookUpMessages") { try await base.lookUpMessages(channelURL: channelURL, reqIds: reqIds) }
    }
    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        try await around("sendMessage") { try await base.sendMessage(request) }
    }
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        try await around("uploadFile") { try await base.uploadFile(request, progress: progress) }
    }
    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        try await around("updateMessage") {
            try await base.updateMessage(channelURL: channelURL, messageId: messageId, text: text, operationId: operationId)
        }
    }
    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        try await around("deleteMessage") {
            try await base.deleteMessage(channelURL: channelURL, messageId: messageId, operationId: operationId)
        }
    }
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage {
        try await around("fetchChannels") { try await base.fetchChannels(query) }
    }
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await around("channelChangeLogs") { try await base.channelChangeLogs(token: token, limit: limit) }
    }
}
