import ChatSyncTesting
import Testing

@testable import ChatSync

/// Holds the answer of the next message page after the service has made it, so that a
/// test can change the service before the answer arrives (a slow link's answer is as old
/// as the moment the service wrote it).
actor LateMessageAnswers: ForwardingChatService {
    let base: any ChatService
    private var hold = OneShotHold()

    init(base: any ChatService) { self.base = base }

    /// Holds the answer of the next page asked for.
    func holdNextAnswer() { hold.arm() }
    /// An answer waits.
    var isHolding: Bool { hold.isHolding }
    /// Lets the held answer arrive, and disarms.
    func release() { hold.release() }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        let page = try await base.fetchMessages(query)
        if hold.takesThisCall() { await withCheckedContinuation { hold.keep($0) } }
        return page
    }
}
