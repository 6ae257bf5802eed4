import ChatSyncTesting

@testable import ChatSync

/// Loses every other request for pages of one kind (a transient error, as a flaky link
/// gives): the answered ones move the sync on, the lost ones end its try.
actor EveryOtherRequestLost: ForwardingChatService {
    enum Pages {
        /// Older than a place: a fill going back in history.
        case olderPages
        /// Newer than a place: a catch-up going forward.
        case newerPages
        /// A channel's change logs since a token.
        case changeLogs
        /// The newest page: the one that proves a channel live with nothing to start from.
        case newestPages
        /// Any request that could prove a channel live: the newest page, or newer messages.
        case proofs
    }

    let base: any ChatService
    private var losing: Pages
    private var isLosing: Bool
    private var losesAll = false
    private var asked = 0
    private(set) var lost = 0

    init(base: any ChatService, losing: Pages) {
        self.base = base
        self.losing = losing
        isLosing = losing == .olderPages
    }

    /// Loses every other request of the kind from now on, the first one going through.
    func startLosing() {
        isLosing = true
        losesAll = false
        asked = 0
    }

    /// Loses every request of the kind, until ``startLosing()``.
    func loseAll() { losesAll = true }

    /// Loses nothing from now on.
    func stopLosing() {
        isLosing = false
        losesAll = false
    }

    /// Goes on losing every other request of another kind, and none of the last.
    func startLosing(_ kind: Pages) {
        losing = kind
        startLosing()
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        let matches =
            switch losing {
            case .olderPages: query.timestamp != .max && query.prevLimit > 0
            case .newerPages: query.timestamp != .max && query.prevLimit == 0 && query.nextLimit > 0
            case .changeLogs: false
            case .newestPages: query.timestamp == .max
            case .proofs: query.timestamp == .max || query.prevLimit == 0
            }
        if matches { try loseEveryOther() }
        return try await base.fetchMessages(query)
    }

    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        if losing == .changeLogs, token != nil { try loseEveryOther() }
        return try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
    }

    private func loseEveryOther() throws {
        if losesAll {
            lost += 1
            throw ChatServiceError.transient(.network, "lost by the test")
        }
        guard isLosing else { return }
        asked += 1
        if asked.isMultiple(of: 2) {
            lost += 1
            throw ChatServiceError.transient(.network, "lost by the test")
        }
    }
}
