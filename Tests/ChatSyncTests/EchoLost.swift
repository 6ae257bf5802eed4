import ChatSync
import ChatSyncTesting

/// Loses the real-time echo of one message of alice's, once armed: the service stored and
/// answered it, but its copy never comes over the event stream (a push lost on its way).
/// Counts what it dropped from the current subscription, which ``Harness/settle(extraEvents:sourceLocation:)``
/// then does not wait for. Every call goes through.
actor EchoLost: ForwardingChatService {
    let base: any ChatService
    /// The channel whose next message from alice is lost, once armed.
    private var armed: String?
    /// Events dropped from the newest subscription.
    private(set) var droppedEvents = 0
    /// The echoes lost so far, by message id.
    private(set) var lost: [Int64] = []

    init(base: any ChatService) { self.base = base }

    func arm(in channelURL: String) { armed = channelURL }
    func disarm() { armed = nil }

    func events() async -> AsyncStream<ServiceEvent> {
        droppedEvents = 0
        let upstream = await base.events()
        let (stream, continuation) = AsyncStream.makeStream(of: ServiceEvent.self)
        let forwarding = Task {
            for await event in upstream where !dropping(event) { continuation.yield(event) }
            continuation.finish()
        }
        continuation.onTermination = { _ in forwarding.cancel() }
        return stream
    }

    private func dropping(_ event: ServiceEvent) -> Bool {
        guard let channelURL = armed, case .messageReceived(let message) = event, message.channelURL == channelURL,
            message.senderId == "alice"
        else { return false }
        armed = nil
        droppedEvents += 1
        lost.append(message.messageId)
        return true
    }
}
