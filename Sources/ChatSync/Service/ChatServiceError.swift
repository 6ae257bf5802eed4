/// An error from a ``ChatService``, classified as transient or permanent.
///
/// Transient errors (network, timeout, 5xx, 429) are worth retrying; permanent
/// ones (invalid, forbidden, not found, too large, frozen) are not.
///
/// ```swift
/// throw ChatServiceError.transient(.network, "no route to host")
/// throw ChatServiceError.permanent(.forbidden, "not a member of general")
/// ```
public struct ChatServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// HTTP-like codes; negative ones are client-side conditions.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable {
        /// The numeric value, as stored in ``SyncFailure/code``.
        public var rawValue: Int
        /// Creates a code.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// The service could not be reached: the user is offline, or the link is down.
        ///
        /// A send, an edit or a deletion that fails with it spends no retry
        /// (``SyncManagerOptions/sendRetryLimit``): offline it waits for the connection,
        /// and while the connection is up it is tried again every
        /// ``SyncManagerOptions/sendRetryInterval`` for as long as it fails so. Throw it
        /// only when the service cannot be reached: a request lost on its way is
        /// ``timeout``, a refusal ``unavailable`` or a permanent code (README, Known
        /// limitations).
        public static let network = Code(rawValue: -1)
        /// The request timed out.
        public static let timeout = Code(rawValue: -2)
        /// The answer could not be decoded.
        public static let badResponse = Code(rawValue: -3)
        /// The app stopped before the service confirmed the message, and the service could
        /// not tell afterwards whether it has it (relaunch reconciliation, Guarantees: Relaunch).
        /// Resending is safe: a repeated `reqId` is the same message.
        public static let unconfirmed = Code(rawValue: -4)
        /// The request is malformed or refused as invalid.
        public static let invalid = Code(rawValue: 400)
        /// The user is not authenticated.
        public static let unauthorized = Code(rawValue: 401)
        /// The user may not do this (for example, not a member).
        public static let forbidden = Code(rawValue: 403)
        /// The channel or message does not exist.
        public static let notFound = Code(rawValue: 404)
        /// The message or file is too large.
        public static let tooLarge = Code(rawValue: 413)
        /// The channel is frozen.
        public static let frozen = Code(rawValue: 423)
        /// Too many requests.
        public static let rateLimited = Code(rawValue: 429)
        /// The server failed.
        public static let server = Code(rawValue: 500)
        /// The server is unavailable.
        public static let unavailable = Code(rawValue: 503)
    }

    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// `true` when retrying later may succeed.
    public var isTransient: Bool

    /// Creates an error.
    public init(code: Code, message: String, isTransient: Bool) {
        self.code = code
        self.message = message
        self.isTransient = isTransient
    }

    /// A failure worth retrying.
    public static func transient(_ code: Code, _ message: String) -> ChatServiceError {
        ChatServiceError(code: code, message: message, isTransient: true)
    }

    /// A failure that retrying cannot fix.
    public static func permanent(_ code: Code, _ message: String) -> ChatServiceError {
        ChatServiceError(code: code, message: message, isTransient: false)
    }

    /// The classification of an HTTP status: 408, 429 and 5xx are transient, other 4xx permanent.
    public static func http(status: Int, message: String) -> ChatServiceError {
        let transient = status == 408 || status == 429 || status >= 500
        return ChatServiceError(code: Code(rawValue: status), message: message, isTransient: transient)
    }

    /// Classifies any error a service threw.
    ///
    /// A ``ChatServiceError`` keeps its class; cancellation and errors ChatSync does
    /// not know are treated as transient ``Code/network`` failures, because a message is
    /// never failed for good on a guess. Like every ``Code/network`` failure they spend no
    /// retry while they last, so a service that throws its own errors should map them to
    /// ``ChatServiceError`` (README, Known limitations).
    public static func classify(_ error: any Error) -> ChatServiceError {
        if let error = error as? ChatServiceError { return error }
        if error is CancellationError { return .transient(.network, "cancelled") }
        return .transient(.network, String(describing: error))
    }

    /// The failure recorded on a message that this error made fail.
    public var failure: SyncFailure {
        SyncFailure(code: code.rawValue, message: message, isRetryable: isTransient)
    }

    /// `ChatServiceError(code, transient|permanent): message`.
    public var description: String {
        "ChatServiceError(\(code.rawValue), \(isTransient ? "transient" : "permanent")): \(message)"
    }
}
