import Logging

/// The one serial owner of a manager's mutable state.
///
/// Every change (a network result, a real-time event, a call from the app) is
/// applied here: first the store transaction, then the events it causes. Network
/// calls run outside and come back with their results.
actor SyncEngine {
    nonisolated let store: ChatStore
    let service: any ChatService
    let options: SyncManagerOptions
    let userId: String
    var logger: Logger { options.logger }

    private(set) var isClosed = false
    private(set) var isRunning = false
    private(set) var connectionState: ConnectionState = .offline
    private var eventsTask: Task<Void, Never>?

    init(store: ChatStore, service: any ChatService, options: SyncManagerOptions, userId: String) {
        self.store = store
        self.service = service
        self.options = options
        self.userId = userId
    }

    /// Throws ``SyncManagerError/Code/closed`` once the manager is closed.
    func checkOpen() throws {
        if isClosed { throw SyncManagerError(.closed, "the SyncManager is closed") }
    }

    // MARK: - Lifecycle

    func resume() async {
        guard !isClosed, !isRunning else { return }
        isRunning = true
        connectionState = .connecting
        let stream = await service.events()
        // The loop holds the engine weakly so that a forgotten manager can go away.
        eventsTask = Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                await self.handle(event)
            }
        }
    }

    func pause() {
        guard isRunning else { return }
        isRunning = false
        eventsTask?.cancel()
        eventsTask = nil
        connectionState = .offline
    }

    func close() {
        guard !isClosed else { return }
        pause()
        isClosed = true
        store.close()
    }

    func clearCache() throws {
        try checkOpen()
        try store.clearCache()
    }

    // MARK: - Service events

    private func handle(_ event: ServiceEvent) {
        guard isRunning else { return }  // a late event after pause is dropped, not applied
        switch event {
        case .connectionChanged(let state):
            if state != connectionState { logger.debug("connection \(connectionState) -> \(state)") }
            connectionState = state
        default:
            break
        }
    }
}
