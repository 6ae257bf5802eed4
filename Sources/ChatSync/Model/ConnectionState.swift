/// The state of the connection to the chat service, as the service reports it.
///
/// ```swift
/// if await manager.connectionState == .offline { showOfflineBanner() }
/// ```
public enum ConnectionState: Sendable, Equatable, Hashable, Codable {
    /// Connected: requests and real-time events flow.
    case online
    /// Not connected: messages wait in the outbox and the cache is served.
    case offline
    /// Trying to connect.
    case connecting
}
