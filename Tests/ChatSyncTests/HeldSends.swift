import ChatSyncTesting

@testable import ChatSync

/// Holds the next send of one lane in flight until released, then passes it on; every
/// other call goes through. A test arms it, acts while that send waits (another message
/// fails beside it, say), then releases it.
actor HeldSends: ForwardingChatService {
    let base: any ChatService
    private var lane: SendLane?
    private var hold = OneShotHold()
    private var holdingWaiters: [CheckedContinuation<Void, Never>] = []

    init(base: any ChatService) { self.base = base }

    /// Holds the next send of `lane`.
    func holdNextSend(of lane: SendLane) {
        self.lane = lane
        hold.arm()
    }

    /// Returns once a send is held.
    func untilHolding() async {
        if hold.isHolding { return }
        await withCheckedContinuation { holdingWaiters.append($0) }
    }

    /// Lets the held send go on, and disarms.
    func release() { hold.release() }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        if request.kind.lane == lane, hold.takesThisCall() {
            await withCheckedContinuation { continuation in
                hold.keep(continuation)
                for waiter in holdingWaiters { waiter.resume() }
                holdingWaiters.removeAll()
            }
        }
        return try await base.sendMessage(request)
    }
}
