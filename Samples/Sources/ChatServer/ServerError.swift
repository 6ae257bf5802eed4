import ChatSync
import Foundation

/// An error the server answers with an HTTP status and a JSON body
/// `{"error": {"code": 403, "message": "..."}}`.
public struct ServerError: Error, Sendable, Codable, Equatable {
    /// The HTTP status.
    public var code: Int
    /// A human-readable explanation.
    public var message: String

    public init(_ code: Int, _ message: String) {
        self.code = code
        self.message = message
    }

    static func badRequest(_ message: String) -> ServerError { ServerError(400, message) }
    static let unauthorized = ServerError(401, "a valid bearer token is required")
    static func forbidden(_ message: String) -> ServerError { ServerError(403, message) }
    static func notFound(_ message: String) -> ServerError { ServerError(404, message) }
    static func tooLarge(_ message: String) -> ServerError { ServerError(413, message) }
    static func frozen(_ channelURL: String) -> ServerError { ServerError(423, "\(channelURL) is frozen") }

    /// The body the server sends.
    struct Body: Codable { var error: ServerError }
}
