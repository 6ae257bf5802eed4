import ChatSyncTesting

@testable import ChatSync

/// While armed, loses every other request for newer messages (a catch-up: a page after a
/// place, none before it) with a transient error, as a flaky link does; every other call
/// goes through. A reconnect's catch-up then gets one page per try and ends short, so the
/// retries that follow must carry on what the earlier tries counted (the huge gap's count,
/// the proof of a channel paged forward from its fresh views' first arrival). It can also
/// lose every request that could prove a channel live (the newest page, newer messages),
/// so that the channel stays unproven.
actor LossyCatchUps: ForwardingChatService {
    let base: any ChatService
    private var isLosing = false
    private var losesEveryProof = false
    private var asked = 0
    /// How many requests it lost since it was made.
    private(set) var lost = 0

    init(base: any ChatService) { self.base = base }

    /// Loses every other catch-up from now on, the first one going through.
    func arm() {
        isLosing = true
        losesEveryProof = false
        asked = 0
    }

    /// Loses every request for the newest page or newer messages, until ``arm()``.
    func loseEveryProof() {
        isLosing = false
        losesEveryProof = true
    }

    /// Lets every call through again.
    func disarm() {
        isLosing = false
        losesEveryProof = false
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        if losesEveryProof, query.timestamp == .max || query.prevLimit == 0 {
            lost += 1
            throw ChatServiceError.transient(.network, "lost by the test")
        }
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
