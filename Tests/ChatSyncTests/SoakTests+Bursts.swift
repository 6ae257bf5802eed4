import ChatSyncTesting
import Testing

@testable import ChatSync

/// The soak's bursts: what queues up while the engine is busy reaches it together, so
/// new messages of a channel arrive as runs, with alice's own sends (and so their echoes)
/// among others' messages, edits and deletions, across the channels.
extension SoakTests {
    func queuedBurst(_ harness: Harness, random: inout SeededGenerator, state: inout SoakState) async throws {
        var shape = ""
        try await harness.withEventsQueued {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
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
