import AsyncHTTPClient
import ChatServer
import ChatServerClient
import ChatSync
import Foundation
import GRDB
import NIOCore
import NIOHTTP1
import Testing

/// The real server on 127.0.0.1, the real HTTP/WebSocket client and real `SyncManager`s
/// on database files. These tests use real time (a network is involved), each wait
/// bounded.
@Suite("Loopback", .serialized)
struct LoopbackTests {
    struct World {
        let directory: URL
        let server: ChatServer
        var running: RunningChatServer
        let tokens: [String: String]

        static func make() async throws -> World {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let server = try ChatServer(databasePath: directory.appendingPathComponent("server.sqlite").path)
            var tokens: [String: String] = [:]
            for user in ["alice", "bob", "mallory"] { tokens[user] = try server.addUser(user) }
            try await server.createChannel("general", members: ["alice", "bob"], name: "General")
            return World(directory: directory, server: server, running: try await server.start(), tokens: tokens)
        }

        func service(_ user: String) -> HTTPChatService {
            HTTPChatService(baseURL: running.baseURL, token: tokens[user]!, timeout: .seconds(5), maxBackoff: .milliseconds(300))
        }

        func manager(_ user: String, _ configure: (inout SyncManagerOptions) -> Void = { _ in }) async throws -> SyncManager {
            var options = SyncManagerOptions()
            options.sendRetryInterval = .milliseconds(100)
            configure(&options)
            return try await SyncManager(
                userId: user, service: service(user), databasePath: directory.appendingPathComponent("\(user).sqlite").path,
                options: options)
        }

        func cleanUp() async {
            await running.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// Runs `body` with a fresh world and always stops its server and removes its files.
    func withWorld(_ body: (inout World) async throws -> Void) async throws {
        var world = try await World.make()
        do {
            try await body(&world)
        } catch {
            await world.cleanUp()
            throw error
        }
        await world.cleanUp()
    }

    /// Polls until `condition` holds, for at most `seconds` of real time: a bound that
    /// only catches a hang (generous, so that a saturated machine is slower, not red).
    func within(_ seconds: Double = 120, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }

    @Test func twoUsersChatThroughTheServer() async throws {
        try await withWorld { world in
            let alice = try await world.manager("alice")
            let bob = try await world.manager("bob")
            await alice.resumeSync()
            await bob.resumeSync()
            let state = await alice.connectionState
            #expect(state == .connecting || state == .online, "resumeSync applied the service's first report")
            #expect(await within { await alice.connectionState == .online })
            let aliceView = try await alice.messageCollection(channelURL: "general")
            let bobView = try await bob.messageCollection(channelURL: "general")
            _ = try await aliceView.fetchSucceededMessages(.previous)
            _ = try await bobView.fetchSucceededMessages(.previous)
            #expect(await within { await bob.connectionState == .online })

            let hello = try await alice.sendMessage(.text("hello bob"), channelURL: "general")
            #expect(await within { await bobView.succeededMessages.map(\.reqId).contains(hello.reqId) })
            _ = try await bob.sendMessage(.text("hi alice"), channelURL: "general")
            #expect(await within { await aliceView.succeededMessages.map(\.text) == ["hello bob", "hi alice"] })
            #expect(await aliceView.pendingMessages.isEmpty)
            #expect(try world.server.messages(in: "general").map(\.text) == ["hello bob", "hi alice"])
            await alice.close()
            await bob.close()
        }
    }

    @Test func everyMessageArrivesOnceAndInLaneOrderAcrossAServerRestart() async throws {
        try await withWorld { world in
            let photo = world.directory.appendingPathComponent("photo.png")
            try Data(repeating: 1, count: 200_000).write(to: photo)
            let alice = try await world.manager("alice") { $0.sendRetryLimit = 10 }
            await alice.resumeSync()
            #expect(await within { await alice.connectionState == .online })
            var sent: [(String, SendLane)] = []
            func send(_ index: Int) async throws {
                let params: MessageParams =
                    index % 4 == 3
                    ? .file(.image, localPath: photo.path, name: "p\(index).png", mimeType: "image/png", caption: "m\(index)")
                    : .text("m\(index)")
                sent.append((try await alice.sendMessage(params, channelURL: "general").reqId, params.kind.lane))
            }
            for index in 0..<8 { try await send(index) }
            // Kill the server mid-stream, keep sending, then start it again on the same file and port.
            await world.running.stop()
            #expect(await within { await alice.connectionState != .online }, "the client saw the server go")
            for index in 8..<16 { try await send(index) }
            #expect(await alice.message(reqId: sent[15].0)?.syncState != .synced, "nothing can be sent while it is down")
            try await Task.sleep(for: .milliseconds(300))
            world.running = try await world.server.start(host: "127.0.0.1", port: world.running.port)
            for index in 16..<20 { try await send(index) }
            #expect(
                await within {
                    let last = await alice.message(reqId: sent.last!.0)?.syncState
                    let lastBeforeRestart = await alice.message(reqId: sent[15].0)?.syncState
                    return last == .synced && lastBeforeRestart == .synced
                })
            #expect(await within { (try? world.server.messages(in: "general").count) == sent.count })
            let stored = try world.server.messages(in: "general").map(\.reqId)
            #expect(Set(stored).count == stored.count, "no duplicates")
            #expect(Set(stored) == Set(sent.map(\.0)), "nothing lost")
            for lane in SendLane.allCases {
                let expected = sent.filter { $0.1 == lane }.map(\.0)
                #expect(stored.filter(expected.contains) == expected, "the \(lane) lane arrived in order")
            }
            await alice.close()
        }
    }

    @Test func aRelaunchReconcilesWhatWasInFlightOverTheNetwork() async throws {
        try await withWorld { world in
            var alice = try await world.manager("alice")
            let applied = try await alice.sendMessage(.text("applied before the crash"), channelURL: "general")
            let lost = try await alice.sendMessage(.text("never reached the server"), channelURL: "general")
            await alice.close()
            // The crash left both in flight; only one had reached the server.
            let queue = try DatabaseQueue(path: world.directory.appendingPathComponent("alice.sqlite").path)
            try await queue.write { db in try db.execute(sql: "UPDATE outbox SET state = 'syncing'") }
            try queue.close()
            _ = try await world.service("alice").sendMessage(
                SendMessageRequest(reqId: applied.reqId, channelURL: "general", kind: .text, text: applied.text))

            alice = try await world.manager("alice")
            await alice.resumeSync()
            #expect(await within { await alice.message(reqId: applied.reqId)?.syncState == .synced })
            #expect(await within { await alice.message(reqId: lost.reqId)?.syncState == .failed })
            #expect(await alice.message(reqId: lost.reqId)?.failure?.isRetryable == true)
            #expect(try world.server.messages(in: "general").map(\.reqId) == [applied.reqId], "found by reqId, not sent twice")
            _ = try await alice.resendMessage(reqId: lost.reqId)
            #expect(await within { await alice.message(reqId: lost.reqId)?.syncState == .synced })
            #expect(try world.server.messages(in: "general").map(\.reqId) == [applied.reqId, lost.reqId])
            await alice.close()
        }
    }

    /// Edits and deletions are applied once per operation id (the `Idempotency-Key`):
    /// a repeat changes nothing, even over a later edit, and a repeated edit of a message
    /// deleted since is not found.
    @Test func editsAndDeletionsAreAppliedOncePerOperationId() async throws {
        try await withWorld { world in
            let alice = world.service("alice")
            let send = { (reqId: String) in
                try await alice.sendMessage(SendMessageRequest(reqId: reqId, channelURL: "general", kind: .text, text: reqId))
            }
            let first = try await send("one")
            let second = try await send("two")
            _ = try await alice.updateMessage(channelURL: "general", messageId: first.messageId, text: "one, edited", operationId: "e1")
            _ = try await alice.updateMessage(channelURL: "general", messageId: first.messageId, text: "one, again", operationId: "e2")
            let repeated = try await alice.updateMessage(
                channelURL: "general", messageId: first.messageId, text: "one, edited", operationId: "e1")
            #expect(repeated.text == "one, again", "the repeat answers the message as it is")
            try await alice.deleteMessage(channelURL: "general", messageId: second.messageId, operationId: "d1")
            try await alice.deleteMessage(channelURL: "general", messageId: second.messageId, operationId: "d1")
            try await alice.deleteMessage(channelURL: "general", messageId: first.messageId, operationId: "d2")
            do {
                _ = try await alice.updateMessage(channelURL: "general", messageId: first.messageId, text: "late", operationId: "e2")
                Issue.record("a repeated edit of a deleted message must not answer it")
            } catch let error as ChatServiceError {
                #expect(error.code == .notFound && !error.isTransient)
            }
            let applied = try world.server.appliedOperations()
            #expect(applied.map(\.id) == ["e1", "e2", "d1", "d2"])
            // The refused repeat of e2 counts nothing: its transaction rolled back.
            #expect(applied.map(\.requests) == [2, 1, 2, 1])
            #expect(try world.server.messages(in: "general").isEmpty)
        }
    }

    @Test func authenticationAndMembershipAreEnforced() async throws {
        try await withWorld { world in
            let raw = RawClient(baseURL: world.running.baseURL)
            #expect(try await raw.request(.GET, "/channels").status == 401)
            #expect(try await raw.request(.GET, "/channels", token: "made-up").status == 401)
            #expect(try await raw.request(.GET, "/ws").status == 401)
            let page = try await world.service("alice").fetchChannels(ChannelPageQuery())
            #expect(page.channels.map(\.channelURL) == ["general"])
            #expect(
                try await world.service("mallory").fetchChannels(ChannelPageQuery()).channels.isEmpty, "a user sees only their channels")
            do {
                _ = try await world.service("mallory").sendMessage(
                    SendMessageRequest(reqId: "x", channelURL: "general", kind: .text, text: "hi"))
                Issue.record("a non-member must not post")
            } catch let error as ChatServiceError {
                #expect(error.code == .forbidden && !error.isTransient)
            }
            do {
                _ = try await world.service("mallory").fetchMessages(
                    MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 10, nextLimit: 0))
                Issue.record("a non-member must not read")
            } catch let error as ChatServiceError {
                #expect(error.code == .forbidden)
            }
            #expect(try world.server.messages(in: "general").isEmpty)
        }
    }

    /// Ids that Swift's `==` takes for one (zoë with a precomposed ë, and with an e and a
    /// combining diaeresis) are two users to the server, as to any service: the second is
    /// no member of the first's channel and may not change her messages (their events:
    /// `EventHubTests`).
    @Test func usersWhoseIdsSpellAlikeAreTwoUsers() async throws {
        try await withWorld { world in
            let (composed, decomposed) = ("zo\u{EB}", "zoe\u{308}")
            let composedService = HTTPChatService(
                baseURL: world.running.baseURL, token: try world.server.addUser(composed), timeout: .seconds(5),
                maxBackoff: .milliseconds(300))
            let decomposedService = HTTPChatService(
                baseURL: world.running.baseURL, token: try world.server.addUser(decomposed), timeout: .seconds(5),
                maxBackoff: .milliseconds(300))
            _ = try await world.server.createChannel("hers", members: [composed, "bob"])
            _ = try await world.server.createChannel("both", members: [composed, decomposed, "bob"])
            #expect(try await decomposedService.fetchChannels(ChannelPageQuery()).channels.map(\.channelURL) == ["both"])
            do {
                _ = try await decomposedService.fetchMessages(
                    MessageQuery(channelURL: "hers", timestamp: .max, prevLimit: 10, nextLimit: 0))
                Issue.record("the other zoë must not read")
            } catch let error as ChatServiceError {
                #expect(error.code == .forbidden)
            }
            let hers = try await composedService.sendMessage(
                SendMessageRequest(reqId: "r1", channelURL: "both", kind: .text, text: "mine"))
            for change in ["edit", "delete"] {
                do {
                    if change == "edit" {
                        _ = try await decomposedService.updateMessage(
                            channelURL: "both", messageId: hers.messageId, text: "x", operationId: "e1")
                    } else {
                        try await decomposedService.deleteMessage(channelURL: "both", messageId: hers.messageId, operationId: "d1")
                    }
                    Issue.record("the other zoë must not \(change) her message")
                } catch let error as ChatServiceError {
                    #expect(error.code == .forbidden)
                }
            }
            #expect(try world.server.messages(in: "both").map(\.text) == ["mine"])
        }
    }

    @Test func malformedRequestsAreRefusedWithoutSideEffects() async throws {
        try await withWorld { world in
            let raw = RawClient(baseURL: world.running.baseURL)
            let token = world.tokens["alice"]!
            let notJSON = try await raw.request(.POST, "/channels/general/messages", token: token, body: Data("not json".utf8))
            #expect(notJSON.status == 400)
            #expect(notJSON.body.contains("\"error\""))
            let missing = try await raw.request(
                .POST, "/channels/general/messages", token: token, body: Data(#"{"text": "no reqId or kind"}"#.utf8))
            #expect(missing.status == 400)
            let wrongType = try await raw.request(
                .POST, "/channels/general/messages", token: token,
                body: Data(#"{"reqId": 5, "channelURL": "general", "kind": "text"}"#.utf8))
            #expect(wrongType.status == 400)
            let unknownKind = try await raw.request(
                .POST, "/channels/general/messages", token: token,
                body: Data(#"{"reqId": "r", "channelURL": "general", "kind": "hologram", "text": "", "customType": "", "data": ""}"#.utf8))
            #expect(unknownKind.status == 400)
            let huge = try await raw.request(.POST, "/channels/general/files", token: token, body: Data(count: ChatServer.maxBodySize + 1))
            #expect(huge.status == 413)
            let unknownChannel = try await raw.request(
                .POST, "/channels/nowhere/messages/lookup", token: token, body: Data(#"{"reqIds": []}"#.utf8))
            #expect(unknownChannel.status == 404)
            let badToken = try await raw.request(.GET, "/channels/general/messages/changelogs?token=banana", token: token)
            #expect(badToken.status == 400)
            #expect(try world.server.messages(in: "general").isEmpty, "nothing was stored")
            // The server still works.
            let ok = try await world.service("alice").sendMessage(
                SendMessageRequest(reqId: "fine", channelURL: "general", kind: .text, text: "fine"))
            #expect(try world.server.messages(in: "general") == [ok])
        }
    }
}

/// Plain HTTP requests, for what the typed client never sends.
struct RawClient {
    let baseURL: String

    func request(_ method: HTTPMethod, _ path: String, token: String? = nil, body: Data? = nil) async throws -> (status: Int, body: String)
    {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: bytes))
    }
}
