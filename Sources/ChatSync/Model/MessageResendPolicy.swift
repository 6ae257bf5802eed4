/// What the outbox does with a message once sending it has failed.
///
/// ```swift
/// var options = SyncManagerOptions()
/// options.messageResendPolicy = .automatic
/// ```
public enum MessageResendPolicy: String, Sendable, Codable, CaseIterable {
    /// Drop the message: it leaves the pending list and nothing is kept.
    case none
    /// Keep it in the failed list until the app resends or deletes it.
    case manual
    /// As ``manual``, and resend retryable failures with a growing delay.
    case automatic
}
