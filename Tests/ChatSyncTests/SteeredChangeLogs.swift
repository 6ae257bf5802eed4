import ChatSyncTesting

@testable import ChatSync

/// Steers the answers to change-log requests since a token, as a test arms it: the next
/// one fails with a transient error, or, once stuck, every one answers no changes, the
/// same token and more to follow (malformed: that page never ends).
actor SteeredChangeLogs: ForwardingChatService {
    let base: any ChatService
    private var failsNext = false
    private var isStuck = false
    /// Requests failed by ``failNext()``.
    private(set) var failed = 0
    /// Requests answered while stuck.
    private(set) var answeredStuck = 0

    init(base: any ChatService) { self.base = base }

    func failNext() { failsNext = true }
    func stick() { isStuck = true }

    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        if failsNext {
            failsNext = false
            failed += 1
            throw ChatServiceError.transient(.server, "busy")
        }
        guard isStuck, let token else { return try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit) }
        answeredStuck += 1
        return MessageChangeLogs(updated: [], deletedMessageIds: [], token: token, hasMore: true)
    }
}
