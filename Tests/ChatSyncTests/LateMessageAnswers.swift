import ChatSyncTesting
import Testing

@testable import ChatSync

/// Holds the answer of the next message page after the service has made it, so that a
/// test can change the service before the answer arrives (a slow link's answer is as old
/// as the moment the service wrote it).
actor LateMessageAnswers: ForwardingChatService {
    let base: any ChatService
    private var holdsNext = false
    private var held: CheckedContinuation<Void, Never>?

    init(base: any ChatService) { self.base = base }

    /// Holds the answer of the next page asked for.
    func holdNextAnswer() { holdsNext = true }
    /// An answer waits.
    var isHolding: Bool { held != nil }
    /// Lets the held answer arrive, and disarms.
    func release() {
        holdsNext = false
        held?.resume()
        held = nil
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        let page = try await base.fetchMessages(query)
        if holdsNext {
            holdsNext = false
            await withCheckedContinuation { held = $0 }
        }
        return page
    }
}
