// MARK: - Calling the service: transient failures, and requests that may prove a channel live

extension SyncEngine {

    /// Calls the service. A transient failure answers `nil` (and is logged); a
    /// permanent one is thrown as ``ChatServiceError``.
    func requestUnlessTransient<T: Sendable>(_ call: @Sendable (any ChatService) async throws -> T) async throws -> T? {
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

    /// Counts a request that may prove the channel live, for the duration of `body`.
    func whileProvingLive<T>(_ channelURL: String, _ body: () async throws -> T) async rethrows -> T {
        channels[channelURL, default: ChannelSyncState()].liveCapableRequests += 1
        defer {
            channels[channelURL]?.liveCapableRequests -= 1
            if channels[channelURL]?.liveCapableRequests == 0 { channels[channelURL]?.heldForLive.removeAll() }
        }
        return try await whileAwaitingAnswers(channelURL, body)
    }

    /// Counts a request for the channel's messages or change logs, for the duration of
    /// `body`: real-time deletions and edits of the channel are remembered meanwhile, for
    /// its answer (see ``laterThanTheAnswer(_:in:)``), and forgotten when none is awaited.
    func whileAwaitingAnswers<T>(_ channelURL: String, _ body: () async throws -> T) async rethrows -> T {
        channels[channelURL, default: ChannelSyncState()].answersAwaited += 1
        defer {
            channels[channelURL]?.answersAwaited -= 1
            if channels[channelURL]?.answersAwaited == 0 {
                channels[channelURL]?.deletedWhileAsked.removeAll()
                channels[channelURL]?.editedWhileAsked.removeAll()
            }
        }
        return try await body()
    }
}
