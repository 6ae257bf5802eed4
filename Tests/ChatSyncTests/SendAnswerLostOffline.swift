import ChatSync
import ChatSyncTesting

/// Lets the next send through to the service, which stores it, then takes alice offline
/// and loses the answer and the echo: her message is on the service while her outbox
/// still waits to send it, the moment at which an app may try to cancel it. Every other
/// call goes through.
actor SendAnswerLostOffline: ForwardingChatService {
    let base: any ChatService
    /// The server that takes alice offline, once armed.
    private var armed: SimulatedChatServer?
    /// The request id of the send whose answer was lost, once it was.
    private(set) var lost: String?
    /// What the lost answer is reported as: a timeout, or `.network`, which the HTTP
    /// services of Samples and Matrix throw for a connection that broke after the request went.
    private var lossCode: ChatServiceError.Code = .timeout

    init(base: any ChatService) { self.base = base }

    /// Loses the answer to the next send, after the service stored it, and takes alice
    /// offline on `server` first; the send then throws a transient error of `code`.
    func arm(goingOfflineOn server: SimulatedChatServer, reportedAs code: ChatServiceError.Code = .timeout) {
        armed = server
        lost = nil
        lossCode = code
    }

    func disarm() { armed = nil }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        guard let server = armed else { return try await base.sendMessage(request) }
        armed = nil  // one send only, even when another lane's send comes in meanwhile
        // The echo goes down with the answer: held, then dropped as the connection breaks.
        await server.holdEvents(for: "alice")
        let stored: Message
        do {
            stored = try await base.sendMessage(request)
        } catch {
            await server.releaseEvents(for: "alice")
            armed = server  // not stored: the next send is the one to lose
            throw error
        }
        lost = stored.reqId
        await server.setOnline(false, for: "alice")
        await server.releaseEvents(for: "alice")  // offline: nothing reaches alice
        throw ChatServiceError.transient(lossCode, "the answer to \(request.reqId) was lost on a connection that broke")
    }
}
