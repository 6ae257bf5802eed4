/// Why a message failed to send.
///
/// ```swift
/// if let failure = message.failure, failure.isRetryable {
///     _ = try await manager.resendMessage(reqId: message.reqId)
/// }
/// ```
public struct SyncFailure: Sendable, Hashable, Codable {
    /// A numeric code; HTTP-like for service errors (for example 403 forbidden).
    public var code: Int
    /// A human-readable explanation.
    public var message: String
    /// `false` when resending cannot help (invalid, forbidden, too large).
    public var isRetryable: Bool

    /// Creates a failure description.
    public init(code: Int, message: String, isRetryable: Bool) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
    }
}
