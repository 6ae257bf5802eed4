import ChatSyncTesting

@testable import ChatSync

/// While armed, loses every other request for newer messages (a catch-up: a page after a
/// place, none before it) with a transient error, as a flaky link does; every other call
/// goes through. A reconnect's catch-up then gets one page per try and ends short, so the
/// retries that follow must carry on what the earlier tries counted (the huge gap's count).
actor LossyCatchUps: ForwardingChatService {
    let base: any ChatService
    private var isLosing = false
    private var asked = 0
    /// How many catch-up requests it lost since it was made.
    private(set) var lost = 0

    init(base: any ChatService) { self.base = base }

    /// Loses every other catch-up from now on, the first one going through.
    func arm() {
        isLosing = true
        asked = 0
    }

    /// Lets every call through again.
    func disarm() { isLosing = false }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if isLosing, query.timestamp != .max, query.prevLimit == 0 {
            asked += 1
            if asked.isMultiple(of: 2) {
                lost += 1
                throw ChatServiceError.transient(.network, "lost by the test")
            }
        }
        return try await base.fetchMessages(query)
    }
}
