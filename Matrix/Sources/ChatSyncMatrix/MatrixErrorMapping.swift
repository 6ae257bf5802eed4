import ChatSync
import Foundation

/// The error body of the client-server API: `{"errcode": "M_…", "error": "…"}`.
struct MatrixErrorBody: Decodable, Sendable {
    var errcode: String?
    var error: String?
    var retryAfterMs: Int64?

    enum CodingKeys: String, CodingKey {
        case errcode, error
        case retryAfterMs = "retry_after_ms"
    }
}

/// How a Matrix error becomes a ``ChatServiceError``, so that the outbox retries what a
/// retry can fix and fails at once what it cannot.
enum MatrixErrorMapping {
    /// The error for an HTTP status and the body the homeserver sent with it.
    static func error(status: Int, body: MatrixErrorBody?) -> ChatServiceError {
        let code = body?.errcode ?? "HTTP \(status)"
        let message = "\(code): \(body?.error ?? "no explanation")"
        switch body?.errcode {
        case "M_LIMIT_EXCEEDED": return .transient(.rateLimited, message)
        case "M_UNKNOWN_TOKEN", "M_MISSING_TOKEN":
            return .permanent(.unauthorized, "the homeserver refused the access token; log in again (\(message))")
        case "M_FORBIDDEN": return .permanent(.forbidden, message)
        case "M_NOT_FOUND": return .permanent(.notFound, message)
        case "M_TOO_LARGE": return .permanent(.tooLarge, message)
        default:
            if status == 429 { return .transient(.rateLimited, message) }
            if status >= 500 || status == 408 { return .http(status: status, message: message) }
            if status == 404 { return .permanent(.notFound, message) }
            return .permanent(status == 401 ? .unauthorized : status == 403 ? .forbidden : .invalid, message)
        }
    }

    /// How long the homeserver asked to wait before trying again, if it did.
    static func retryAfter(_ body: MatrixErrorBody?) -> Duration? {
        guard body?.errcode == "M_LIMIT_EXCEEDED" || body?.retryAfterMs != nil, let ms = body?.retryAfterMs else { return nil }
        return .milliseconds(max(0, ms))
    }
}
