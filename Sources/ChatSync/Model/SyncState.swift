/// Where a message is in its life.
///
/// Pending means ``created``, ``uploading`` or ``syncing``; failed means
/// ``failed``; succeeded means ``synced``.
///
/// ```swift
/// SyncState.uploading.isPending  // true
/// ```
public enum SyncState: String, Sendable, Codable, CaseIterable {
    /// Stored locally, waiting in the outbox.
    case created
    /// The attachment upload is in flight.
    case uploading
    /// The send request is in flight.
    case syncing
    /// Stored on the server.
    case synced
    /// Given up on; see ``Message/failure``.
    case failed

    /// `true` for ``created``, ``uploading`` and ``syncing``.
    public var isPending: Bool { self == .created || self == .uploading || self == .syncing }
}
