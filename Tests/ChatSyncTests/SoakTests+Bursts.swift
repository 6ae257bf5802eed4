import ChatSyncTesting
import Testing

@testable import ChatSync

/// The soak's bursts: what queues up while the engine is busy reaches it together, so
/// new messages of a channel arrive as runs, with alice's own sends (and so their echoes)
/// among others' messages, edits and deletions, across the channels. In some, online,
/// the connection also breaks and comes back once or twice among them, so the engine
/// handles the changes in the same batch (each return once started its work twice).
extension SoakTests {
    func queuedBurst(
        _ harness: Harness, random: inout SeededGenerator, flaps: inout SeededGenerator, state: inout SoakState
    ) async throws {
        var shape = ""
        let parts = Int.random(in: 1...3, using: &random)
        var flapsBefore: Set<Int> = []  // the parts a break and return come before (`parts`: after the last)
        if state.online, state.running, Int.random(in: 0..<3, using: &flaps) == 0 {
            for _ in 0..<Int.random(in: 1...2, using: &flaps) { flapsBefore.insert(Int.random(in: 0...parts, using: &flaps)) }
        }
        try await harness.withEventsQueued {
            for part in 0...parts {
                if flapsBefore.contains(part) {
                    await harness.server.setOnline(false, for: "alice")
                    await harness.server.setOnline(true, for: "alice")
                    shape += "[flap]"
                }
                guard part < parts else { break }
                if Bool.random(using: &random) {
                    let channelURL = Self.channels.randomElement(using: &random)!
                    let message = try await harness.manager.sendMessage(.text("q\(state.log.count)"), channelURL: channelURL)
                    state.sent.append(Sent(reqId: message.reqId, channelURL: channelURL, lane: .text, permanent: false))
                    shape += "[alice \(channelURL)]"
                }
                shape += try await LiveBurst.others(harness.server, channels: Self.channels, senders: Self.senders, random: &random)
            }
        }
        state.log.append(shape)
    }
}
