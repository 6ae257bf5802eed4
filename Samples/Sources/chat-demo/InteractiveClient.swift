import ChatServerClient
import ChatSync
import Foundation
import Logging

/// A line-based chat client: plain lines send, commands start with "/".
/// Equatable so that the command-line tests can compare what the options parsed to.
struct InteractiveClient: Equatable {
    /// The channel opened when `--channel` is not given; chat-server's README example creates it.
    static let defaultChannel = "general"

    /// The server's base URL (checked by `ChatDemoCommand.serverURL`).
    let server: String
    /// The user id, which must match the token's user on the server.
    let user: String
    /// The bearer token chat-server printed for `user`.
    let token: String
    /// The path of the client's SQLite cache.
    let database: String
    /// The URL of the channel shown and written to.
    var channel = InteractiveClient.defaultChannel

    static let help = """
        commands: /history (older messages)  /offline  /online  /failed  /resend N  /jump <ms since 1970 or HH:MM>  /quit
                  /edit N text  /delete N  (N: 1 is your newest message in the view, 2 the one before, ...)
        anything else is sent as a message; edits and deletions work offline too
        """

    static func line(_ message: Message) -> String {
        let time = DateFormatter.localizedString(
            from: Date(timeIntervalSince1970: Double(message.createdAt) / 1000), dateStyle: .none, timeStyle: .short)
        let state = message.syncState == .synced ? (message.isEditPending ? " [edit pending]" : "") : " [\(message.syncState.rawValue)]"
        return "\(time) \(message.senderId): \(message.text)\(state)"
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        let service = HTTPChatService(baseURL: server, token: token)
        let manager = try await SyncManager(userId: user, service: service, databasePath: database)
        await manager.resumeSync()
        let view = try await manager.messageCollection(channelURL: channel, limit: 20)
        let printer = Task {
            for await event in view.events {
                switch event {
                case .succeeded(.insert, let messages): messages.forEach { print(Self.line($0)) }
                case .succeeded(.update, let messages): messages.forEach { print("(edited) " + Self.line($0)) }
                case .succeeded(.remove, let messages): print("(\(messages.count) message(s) left the view)")
                case .pending(.insert, let messages): messages.forEach { print(Self.line($0)) }
                case .failed(.insert, let messages, _): messages.forEach { print("failed: \($0.text) (\($0.failure?.message ?? ""))") }
                case .hugeGapDetected: print("(many messages missed: /jump now to see the newest)")
                default: break
                }
            }
        }
        try await view.fetchPendingMessages()
        try await view.fetchFailedMessages()
        _ = try await view.fetchSucceededMessages(.previous)
        print("connected to \(server) as \(user) in #\(channel). \(Self.help)")
        for await input in Self.standardInputLines() {
            let text = input.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            do {
                if try await !handle(text, manager: manager, view: view) { break }
            } catch {
                print("error: \(error)")
            }
        }
        await view.remove()
        await printer.value
        await manager.close()
    }

    /// Runs one line; answers `false` for /quit.
    func handle(_ text: String, manager: SyncManager, view: MessageCollection) async throws -> Bool {
        let words = text.split(separator: " ", maxSplits: 1).map(String.init)
        switch words[0] {
        case "/quit": return false
        case "/history":
            let before = await view.messageCount
            let more = try await view.fetchSucceededMessages(.previous)
            print("(\(await view.messageCount - before) older message(s)\(more ? "" : ", the start of the channel"))")
        case "/offline":
            await manager.pauseSync()
            print("(offline: messages wait in the outbox)")
        case "/online":
            await manager.resumeSync()
            print("(online: \(await manager.connectionState))")
        case "/failed":
            let failed = await view.failedMessages
            if failed.isEmpty { print("(no failed messages)") }
            for (index, message) in failed.enumerated() { print("\(index + 1). \(message.text): \(message.failure?.message ?? "")") }
        case "/resend":
            let failed = await view.failedMessages
            guard words.count == 2, let number = Int(words[1]), failed.indices.contains(number - 1) else {
                print("(usage: /resend N, with N from /failed)")
                return true
            }
            _ = try await manager.resendMessage(reqId: failed[number - 1].reqId)
        case "/edit", "/delete":
            let parts = text.split(separator: " ", maxSplits: 2).map(String.init)
            let mine = await view.succeededMessages.filter { $0.senderId == user }.reversed().map { $0 }
            guard parts.count >= 2, let number = Int(parts[1]), mine.indices.contains(number - 1),
                parts[0] == "/delete" || parts.count == 3
            else {
                print("(usage: /edit N new text, or /delete N; N = 1 is your newest message in the view)")
                return true
            }
            let target = mine[number - 1]
            if parts[0] == "/edit" {
                _ = try await manager.updateMessage(messageId: target.messageId, channelURL: channel, text: parts[2])
            } else {
                try await manager.deleteMessage(messageId: target.messageId, channelURL: channel)
            }
        case "/jump":
            guard words.count == 2, let time = Self.time(words[1]) else {
                print("(usage: /jump <ms since 1970 | HH:MM | now>)")
                return true
            }
            try await view.resetViewpointTimestamp(time)
            print("(jumped)")
            _ = try await view.fetchSucceededMessages(.previous)
            _ = try await view.fetchSucceededMessages(.next)
        case let command where command.hasPrefix("/"):
            print(Self.help)
        default:
            _ = try await manager.sendMessage(.text(text), channelURL: channel)
        }
        return true
    }

    /// `now`, milliseconds since 1970, or `HH:MM` today.
    static func time(_ text: String) -> Int64? {
        if text == "now" { return .max }
        if let milliseconds = Int64(text) { return milliseconds }
        let parts = text.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 2 else { return nil }
        var components = Calendar.current.dateComponents([.year, .month, .day], from: Date())
        components.hour = parts[0]
        components.minute = parts[1]
        return Calendar.current.date(from: components).map { Int64($0.timeIntervalSince1970 * 1000) }
    }

    /// Standard input, a line at a time, read on a thread of its own.
    static func standardInputLines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
            thread.start()
        }
    }
}
