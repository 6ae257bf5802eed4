import ChatSyncTesting
import Testing

@testable import ChatSync

extension Harness {
    /// Runs `body` while the engine leaves real-time events in its inbox, as an engine busy
    /// with a burst does, then has what queued up handled together: consecutive new
    /// messages of one channel then arrive as one run (`SyncEngine+LiveRuns.swift`).
    /// It waits a bounded number of turns for every delivered event to reach the inbox;
    /// whatever comes later is handled as it comes, so no outcome hinges on the wait.
    func withEventsQueued(_ body: () async throws -> Void) async throws {
        let engine = manager.engine
        await engine.holdEventDrain()
        do {
            try await body()
        } catch {
            await engine.releaseEventDrain()
            throw error
        }
        for _ in 0..<10_000 {
            let delivered = await server.deliveredEventCount(for: userId)
            guard await engine.isRunning, await engine.handledOrQueuedEventCount < delivered else { break }
            await Task.yield()
        }
        await engine.releaseEventDrain()
    }
}

/// Others' bursts for the generators: mostly new messages in a row, which the engine
/// applies as a run, broken now and then by what a run must not swallow (a message dated
/// in the past, an edit, a deletion, a message of another channel).
enum LiveBurst {
    static func others(
        _ server: SimulatedChatServer, channels: [String], senders: [String], random: inout SeededGenerator
    ) async throws -> String {
        var channelURL = channels.randomElement(using: &random)!
        let count = Int.random(in: 2...40, using: &random)
        var shape = ""
        for index in 0..<count {
            let sender = senders.randomElement(using: &random)!
            // Alice's own messages are left to the generators that track her writes.
            let existing = await server.messages(in: channelURL).filter { $0.senderId != "alice" }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<80:
                shape += "n"
                try await server.post(.text("run \(index)"), from: sender, to: channelURL)
            case 80..<86:
                channelURL = channels.randomElement(using: &random)!
                shape += "|"
                try await server.post(.text("run \(index)"), from: sender, to: channelURL)
            case 86..<90:
                guard let target = existing.randomElement(using: &random) else { continue }
                shape += "p"
                let at = target.createdAt - Int64.random(in: 0...2, using: &random)
                try await server.post(.text("past \(index)"), from: sender, to: channelURL, at: at)
            case 90..<95:
                guard let target = existing.randomElement(using: &random) else { continue }
                shape += "e"
                try await server.update(messageId: target.messageId, channelURL: channelURL, text: "burst edit \(index)")
            default:
                guard let target = existing.randomElement(using: &random) else { continue }
                shape += "d"
                try await server.delete(messageId: target.messageId, channelURL: channelURL)
            }
        }
        return "burst queued \(shape)"
    }
}
