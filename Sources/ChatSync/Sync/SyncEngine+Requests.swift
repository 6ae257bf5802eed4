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
        return try await body()
    }
}
