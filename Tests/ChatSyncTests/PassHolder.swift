import ChatSyncTesting

@testable import ChatSync

/// Holds alice's requests of two kinds in flight, each until the test lets it go: the
/// channel's change logs (one hold per armed request) and the next catch-up, which it
/// can answer with a failure.
actor PassHolder: ForwardingChatService {
    let base: any ChatService
    private var changeLogHoldsArmed = 0
    private var heldChangeLogs: [CheckedContinuation<Void, Never>] = []
    private var catchUpArmed = false
    private var heldCatchUp: CheckedContinuation<Bool, Never>?

    init(base: any ChatService) { self.base = base }

    func holdNextChangeLogs() { changeLogHoldsArmed += 1 }
    var heldChangeLogCount: Int { heldChangeLogs.count }
    /// Lets the oldest held change-log request go on.
    func releaseOldestChangeLogs() {
        guard !heldChangeLogs.isEmpty else { return }
        heldChangeLogs.removeFirst().resume()
    }

    func holdNextCatchUp() { catchUpArmed = true }
    var isHoldingCatchUp: Bool { heldCatchUp != nil }
    /// Lets the held catch-up go on, or fail as a timeout.
    func releaseCatchUp(failing: Bool) {
        heldCatchUp?.resume(returning: failing)
        heldCatchUp = nil
    }

    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        if changeLogHoldsArmed > 0 {
            changeLogHoldsArmed -= 1
            await withCheckedContinuation { heldChangeLogs.append($0) }
        }
        return try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if catchUpArmed, query.timestamp != .max, query.prevLimit == 0 {
            catchUpArmed = false
            if await withCheckedContinuation({ heldCatchUp = $0 }) {
                throw ChatServiceError.transient(.timeout, "the catch-up's answer was lost")
            }
        }
        return try await base.fetchMessages(query)
    }
}
