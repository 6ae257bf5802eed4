// MARK: - Calling the service: transient failures, and requests that may prove a channel live

extension SyncEngine {

    /// Calls the service. A transient failure answers `nil` (and is logged); a
    /// permanent one is thrown as ``ChatServiceError``. Paused, offline or closed, it
    /// asks nothing and answers `nil`, as for a service out of reach: work that was under
    /// way when the app paused (a list's page answered after it, then the change logs that
    /// follow a page) stops at its next request rather than going on (API §1, `pauseSync()`
    /// stops network work; an adversarial review's finding, `PauseStopsRequestsTests`).
    func requestUnlessTransient<T: Sendable>(_ call: @Sendable (any ChatService) async throws -> T) async throws -> T? {
        guard canReachService else {
            logger.debug("request not made: paused, offline or closed")
            return nil
        }
        do {
            return try await call(service)
        } catch {
            let classified = ChatServiceError.classify(error)
            guard classified.isTransient else { throw classified }
            // A malformed answer says something is wrong with the service: worth a warning.
            if classified.code == .badResponse {
                logger.warning("the service's answer was refused, will retry later: \(classified)")
            } else {
                logger.debug("request failed, will retry later: \(classified)")
            }
            return nil
        }
    }

    /// Counts a request that may prove the channel live, for the duration of `body`
    /// (see ``whileAwaitingAnswers(_:_:)``).
    func whileProvingLive<T>(_ channelURL: String, _ body: () async throws -> T) async rethrows -> T {
        requestStarted(channelURL, liveCapable: true)
        defer { requestEnded(channelURL, liveCapable: true) }
        return try await body()
    }

    /// Counts a request for the channel's messages or change logs, for the duration of
    /// `body`: deletions and edits of the channel learnt meanwhile (in real time, from
    /// change logs, other pages or the user's own writes landing) are remembered for its
    /// answer (see ``laterThanTheAnswer(_:in:)``), and forgotten when none is awaited.
    func whileAwaitingAnswers<T>(_ channelURL: String, _ body: () async throws -> T) async rethrows -> T {
        requestStarted(channelURL, liveCapable: false)
        defer { requestEnded(channelURL, liveCapable: false) }
        return try await body()
    }

    private func requestStarted(_ channelURL: String, liveCapable: Bool) {
        inFlight[channelURL, default: RequestsInFlight()].answersAwaited += 1
        if liveCapable { inFlight[channelURL, default: RequestsInFlight()].liveCapable += 1 }
    }

    private func requestEnded(_ channelURL: String, liveCapable: Bool) {
        guard var requests = inFlight[channelURL] else { return }
        requests.answersAwaited -= 1
        if liveCapable {
            requests.liveCapable -= 1
            if requests.liveCapable == 0 { channels[channelURL]?.heldForLive.removeAll() }
        }
        inFlight[channelURL] = requests.answersAwaited == 0 ? nil : requests
    }
}
