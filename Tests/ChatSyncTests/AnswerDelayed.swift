import ChatSync
import ChatSyncTesting
import Testing

/// Runs a step of the test's choosing between the service handling the next send (or
/// look-up by request id) and its answer reaching the client: the moment in which the
/// message is on the service while the outbox still waits to hear, and anything else
/// may happen first (a channel ends). Every other call goes through.
actor AnswerDelayed: ForwardingChatService {
    /// The calls whose answer can wait.
    enum Call: Sendable { case send, lookUp }

    let base: any ChatService
    /// What runs before the next answer to each call (in one channel, or any), once armed.
    private var meanwhile: [Call: (channelURL: String?, step: @Sendable () async throws -> Void)] = [:]
    /// The request ids the answer that waited named, once one did.
    private(set) var delayed: [Call: [String]] = [:]

    init(base: any ChatService) { self.base = base }

    /// Runs `step` after the service handled the next `call` (in `channelURL`, or in any
    /// channel) and before its answer comes.
    func arm(_ call: Call, in channelURL: String? = nil, meanwhile step: @escaping @Sendable () async throws -> Void) {
        meanwhile[call] = (channelURL, step)
        delayed[call] = nil
    }

    func disarm(_ call: Call) { meanwhile[call] = nil }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        try await answer(.send, in: request.channelURL) {
            try await $0.sendMessage(request)
        } named: {
            [$0.reqId]
        }
    }

    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await answer(.lookUp, in: channelURL) {
            try await $0.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
        } named: {
            $0.map(\.reqId)
        }
    }

    private func answer<Answer: Sendable>(
        _ call: Call, in channelURL: String, _ request: @Sendable (any ChatService) async throws -> Answer,
        named: (Answer) -> [String]
    ) async throws -> Answer {
        guard let armed = meanwhile[call], armed.channelURL ?? channelURL == channelURL else { return try await request(base) }
        meanwhile[call] = nil  // one call only, even when another lane's comes in meanwhile
        let answer: Answer
        do {
            answer = try await request(base)
        } catch {
            meanwhile[call] = armed  // not handled: the next call is the one to wait
            throw error
        }
        delayed[call] = named(answer)
        do {
            try await armed.step()
        } catch {
            Issue.record("the step run before the answer to a \(call) threw \(error)")
        }
        return answer
    }
}
