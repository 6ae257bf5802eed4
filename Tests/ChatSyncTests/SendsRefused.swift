import ChatSync
import ChatSyncTesting

/// Refuses every send of one request id with a 503 before it reaches the service (a
/// refusal the service answered: nothing stored by that try), until told to stop. Every
/// other call, and every other send, goes through.
actor SendsRefused: ForwardingChatService {
    let base: any ChatService
    private var refused: String?
    /// How many sends of the refused request id were turned away.
    private(set) var refusals = 0

    init(base: any ChatService) { self.base = base }

    func refuse(_ reqId: String) {
        refused = reqId
        refusals = 0
    }

    func stop() { refused = nil }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        guard request.reqId == refused else { return try await base.sendMessage(request) }
        refusals += 1
        throw ChatServiceError.transient(.unavailable, "the service is too busy to take \(request.reqId)")
    }
}
