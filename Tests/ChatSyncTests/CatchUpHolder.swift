import ChatSync
import ChatSyncTesting

/// Holds the next request for newer messages (a catch-up: a page after a place, none
/// before it) in flight until released, then passes it on; every other call goes through.
/// A test or generator arms it, acts while that request waits (the connection breaks and
/// comes back, say), then releases it.
actor CatchUpHolder: ForwardingChatService {
    let base: any ChatService
    private var holdsNext = false
    private var held: CheckedContinuation<Void, Never>?

    init(base: any ChatService) { self.base = base }

    /// Holds the next catch-up that arrives.
    func holdNextCatchUp() { holdsNext = true }
    /// A catch-up waits.
    var isHolding: Bool { held != nil }
    /// Answers the held catch-up, if any, and disarms: a later catch-up goes through.
    func release() {
        holdsNext = false
        held?.resume()
        held = nil
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if holdsNext, query.timestamp != .max, query.prevLimit == 0 {
            holdsNext = false
            await withCheckedContinuation { held = $0 }
        }
        return try await base.fetchMessages(query)
    }
}
