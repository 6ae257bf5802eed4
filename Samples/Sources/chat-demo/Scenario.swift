import ChatServer
import ChatServerClient
import ChatSync
import Foundation
import Logging

/// The narrated tour: every step prints what alice's view shows and the message states.
struct Scenario {
    let started = Date()

    func say(_ text: String) { print(text) }

    /// Polls until `condition` holds. The bound only catches a hang: the story waits for
    /// outcomes, never for a duration, so a busy machine (CI with both cores saturated)
    /// makes it slower, not wrong.
    func waitFor(_ what: String, timeout: Double = 120, _ condition: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while try await !condition() {
            guard Date() < deadline else { throw DemoError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func describe(_ messages: [Message]) -> String {
        guard let first = messages.first, let last = messages.last else { return "none" }
        return messages.count == 1 ? "\"\(first.text)\"" : "\"\(first.text)\" … \"\(last.text)\""
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chat-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        say("ChatSync demo: a chat view that keeps working offline and never loses or doubles a message.\n")

        // 1. The server.
        let server = try ChatServer(databasePath: directory.appendingPathComponent("server.sqlite").path)
        let aliceToken = try server.addUser("alice")
        _ = try server.addUser("bob")
        try await server.createChannel("general", members: ["alice", "bob"], name: "General")
        for index in 1...120 { try await server.post(.text("bob #\(index)"), from: "bob", to: "general") }
        let running = try await server.start(host: "127.0.0.1", port: 0)
        say("1. A reference server listens on \(running.baseURL) (SQLite in a temporary folder).")
        say("   Users alice and bob share the channel \"general\"; bob has written 120 messages.\n")

        // 2. History, page by page.
        let network = NetworkSwitch(HTTPChatService(baseURL: running.baseURL, token: aliceToken))
        let cache = directory.appendingPathComponent("alice.sqlite").path
        var options = SyncManagerOptions()
        options.sendRetryInterval = .milliseconds(200)
        var manager = try await SyncManager(userId: "alice", service: network, databasePath: cache, options: options)
        await manager.resumeSync()
        var view = try await manager.messageCollection(channelURL: "general", limit: 40)
        say("2. alice opens the chat and scrolls up; each page is synced once, then cached:")
        var page = 1
        var hasMore = true
        while hasMore {
            hasMore = try await view.fetchSucceededMessages(.previous)
            let shown = await view.succeededMessages
            say("   page \(page): the view holds \(shown.count) messages, \(describe(shown))\(hasMore ? "" : " (the start)")")
            page += 1
        }
        try await view.resetViewpointTimestamp(.max)
        _ = try await view.fetchSucceededMessages(.previous)
        say("   back at the newest: \(await view.messageCount) messages shown, \(describe(await view.succeededMessages)).\n")

        // 3. Offline sending.
        network.setOnline(false)
        try await waitFor("offline") { await manager.connectionState == .offline }
        let photo = directory.appendingPathComponent("cat.png")
        try Data(repeating: 0xCA, count: 300_000).write(to: photo)
        say("3. alice loses the network (airplane mode) and writes anyway:")
        let text1 = try await manager.sendMessage(.text("On my way!"), channelURL: "general")
        let image = try await manager.sendMessage(
            .file(.image, localPath: photo.path, name: "cat.png", mimeType: "image/png", caption: "look at this cat"), channelURL: "general"
        )
        let text2 = try await manager.sendMessage(.text("Bringing snacks."), channelURL: "general")
        let pending = await view.pendingMessages
        say(
            "   the view shows them at once as pending: "
                + pending.map { "\"\($0.text)\" (\($0.syncState.rawValue))" }.joined(separator: ", "))
        say("   nothing was sent: the outbox waits for the network without spending retries.\n")

        // 4. Back online: lanes.
        say("4. The network is back. Text and media go through separate FIFO lanes:")
        let imageUpdates = manager.observeMessage(reqId: image.reqId)
        let imageStates = Task {
            var states: [String] = []
            for await message in imageUpdates {
                let state =
                    message.syncState == .uploading ? "uploading \(Int((message.uploadProgress ?? 0) * 100))%" : message.syncState.rawValue
                if states.last != state { states.append(state) }
            }
            return states
        }
        network.setOnline(true)
        try await waitFor("the outbox to empty") { await view.pendingMessages.isEmpty }
        say("   the photo went " + (await imageStates.value).joined(separator: " → "))
        let onServer = try server.messages(in: "general").suffix(3)
        say("   the server received: " + onServer.map { "\"\($0.text)\"" }.joined(separator: ", ") + " (each lane in order)")
        say("   alice's view now ends with: \(describe(Array(await view.succeededMessages.suffix(3))))\n")

        // 5. A lost response.
        say("5. The server stores a message, but its answer is lost on the way back:")
        network.loseNextSendResponse()
        let lost = try await manager.sendMessage(.text("Did this arrive?"), channelURL: "general")
        try await waitFor("the retry") { await manager.message(reqId: lost.reqId)?.syncState == .synced }
        let copies = try server.messages(in: "general").filter { $0.reqId == lost.reqId }.count
        say("   ChatSync retried with the same reqId; the server answered the stored message.")
        say("   copies on the server: \(copies).\n")

        // 6. Killed mid-send, relaunched.
        say("6. The app is killed while a message is in flight (the server has it, the app never heard back):")
        network.muteEvents(true)
        network.hangNextSend()
        let inFlight = try await manager.sendMessage(.text("Sent just before the crash"), channelURL: "general")
        try await waitFor("the send to reach the server") { try server.messages(in: "general").contains { $0.reqId == inFlight.reqId } }
        say("   outbox state at the crash: \(await manager.message(reqId: inFlight.reqId)?.syncState.rawValue ?? "?")")
        await view.remove()
        await manager.close()
        network.muteEvents(false)
        manager = try await SyncManager(userId: "alice", service: network, databasePath: cache, options: options)
        view = try await manager.messageCollection(channelURL: "general", limit: 40)
        try await view.fetchPendingMessages()
        say(
            "   relaunched on the same file: the view shows it pending: "
                + (await view.pendingMessages.map { "\"\($0.text)\" (\($0.syncState.rawValue))" }).joined(separator: ", "))
        await manager.resumeSync()
        try await waitFor("reconciliation") { await manager.message(reqId: inFlight.reqId)?.syncState == .synced }
        _ = try await view.fetchSucceededMessages(.previous)
        let crashCopies = try server.messages(in: "general").filter { $0.reqId == inFlight.reqId }.count
        say("   ChatSync asked the server by reqId: found, so it is synced, not sent again (copies: \(crashCopies)).\n")

        // 7. Live.
        say("7. bob writes; it reaches alice's open view live:")
        let liveEvents = view.events
        let live = Task {
            for await event in liveEvents {
                if case .newMessage(let message) = event { return message.text }
            }
            return ""
        }
        try await server.post(.text("Great, see you soon!"), from: "bob", to: "general")
        say("   .newMessage: \"\(await live.value)\"")
        try await waitFor("the live insert") { await view.succeededMessages.last?.text == "Great, see you soon!" }
        say("   the view's newest messages: \(describe(Array(await view.succeededMessages.suffix(2))))\n")

        // 8. Edits and deletions offline.
        say("8. Offline again, alice corrects one of her messages and deletes another:")
        network.setOnline(false)
        try await waitFor("offline") { await manager.connectionState == .offline }
        let shownNow = await view.succeededMessages
        guard let onMyWay = shownNow.first(where: { $0.reqId == text1.reqId }),
            let snacks = shownNow.first(where: { $0.reqId == text2.reqId })
        else { throw DemoError("alice's messages are not in the view") }
        let edited = try await manager.updateMessage(messageId: onMyWay.messageId, channelURL: "general", text: "On my way, 5 minutes!")
        try await manager.deleteMessage(messageId: snacks.messageId, channelURL: "general")
        let stillThere = await view.succeededMessages.contains { $0.messageId == snacks.messageId }
        say("   the view shows \"\(edited.text)\" at once (edit pending: \(edited.isEditPending)); the deleted one is gone: \(!stillThere)")
        let serverBefore = try server.messages(in: "general").first { $0.messageId == onMyWay.messageId }?.text ?? "?"
        say("   the server still has \"\(serverBefore)\": both wait in the outbox.")
        network.setOnline(true)
        try await waitFor("the edit and the deletion to land") {
            let messages = try server.messages(in: "general")
            return messages.first { $0.messageId == onMyWay.messageId }?.text == edited.text
                && !messages.contains { $0.messageId == snacks.messageId }
        }
        try await waitFor("the view to confirm the edit") {
            await view.succeededMessages.first { $0.messageId == onMyWay.messageId }?.isEditPending == false
        }
        say("   back online, both landed: the server has \"\(edited.text)\" and no longer has \"Bringing snacks.\"\n")

        await manager.close()
        await running.stop()
        say(
            String(
                format: "Done in %.1f s. Run it again, or try the interactive client (see the README).", Date().timeIntervalSince(started)))
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
