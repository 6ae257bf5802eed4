import AsyncHTTPClient
import ChatSync
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A ``ChatService`` on a Matrix homeserver, through the client-server API (v3).
///
/// Rooms the user has joined are channels, `m.room.message` events are messages (see
/// ``MatrixMessageMapping``), and the `reqId` of a send is its transaction id, which
/// makes a repeated send the same event. Use the Matrix user id as ChatSync's user id:
///
/// ```swift
/// let service = try await MatrixChatService.login(
///     homeserver: "https://matrix.example.org", user: "alice", password: password,
///     deviceId: savedDeviceId, eventIdsPath: dir + "/event-ids.sqlite")
/// let manager = try await SyncManager(userId: service.userId, service: service, databasePath: dir + "/cache.sqlite")
/// ```
///
/// Keep the device id (and, better, the access token) across launches: a homeserver
/// tells a device the transaction ids of its own events only, and the relaunch
/// reconciliation finds in-flight messages by them.
///
/// Not supported: end-to-end encrypted rooms (their events are skipped, with one
/// warning per room).
public final class MatrixChatService: ChatService {
    /// The Matrix user id, such as `@alice:example.org`: ChatSync's user id.
    public let userId: String
    /// The device this service acts as.
    public let deviceId: String
    /// The session's access token: keep it (in the keychain) with ``deviceId`` and pass
    /// both to ``init(homeserver:userId:accessToken:deviceId:eventIdsPath:client:lookUpDepth:logger:)``
    /// at the next launch, so that the relaunch reconciliation finds this device's
    /// transaction ids.
    public let accessToken: String
    let http: MatrixHTTP
    let ids: MatrixEventIds
    let logger: Logger
    /// How many events a look-up by transaction id reads back from the newest at most.
    let lookUpDepth: Int
    /// Rooms already warned about as encrypted.
    let warnedRooms = Mutex<Set<String>>([])

    /// A service for a user who already has an access token.
    ///
    /// - Parameters:
    ///   - homeserver: the base URL of the homeserver's client API.
    ///   - eventIdsPath: where ``MatrixEventIds`` keeps its map (next to the cache), or
    ///     `nil` for memory only.
    ///   - client: the HTTP client; the shared one by default.
    public init(
        homeserver: String, userId: String, accessToken: String, deviceId: String, eventIdsPath: String?,
        client: HTTPClient = .shared, lookUpDepth: Int = 2_000, logger: Logger = Logger(label: "ChatSyncMatrix")
    ) throws {
        self.userId = userId
        self.deviceId = deviceId
        self.accessToken = accessToken
        self.http = MatrixHTTP(client: client, baseURL: homeserver.hasSuffix("/") ? String(homeserver.dropLast()) : homeserver)
        self.ids = try MatrixEventIds(path: eventIdsPath)
        self.lookUpDepth = lookUpDepth
        self.logger = logger
    }

    /// Logs in with a password and answers a service for the session.
    ///
    /// - Parameter deviceId: the device to log in as; pass the one of an earlier login so
    ///   that the homeserver keeps telling this device its transaction ids.
    public static func login(
        homeserver: String, user: String, password: String, deviceId: String? = nil, eventIdsPath: String?,
        client: HTTPClient = .shared
    ) async throws -> MatrixChatService {
        struct LoginAnswer: Decodable {
            var userId: String
            var accessToken: String
            var deviceId: String
            enum CodingKeys: String, CodingKey {
                case userId = "user_id"
                case accessToken = "access_token"
                case deviceId = "device_id"
            }
        }
        var body: [String: JSONValue] = [
            "type": .string("m.login.password"),
            "identifier": .object(["type": .string("m.id.user"), "user": .string(user)]),
            "password": .string(password),
        ]
        if let deviceId { body["device_id"] = .string(deviceId) }
        let http = MatrixHTTP(client: client, baseURL: homeserver)
        let answer = try await http.call(.POST, "/_matrix/client/v3/login", json: .object(body), token: nil, as: LoginAnswer.self)
        return try MatrixChatService(
            homeserver: homeserver, userId: answer.userId, accessToken: answer.accessToken, deviceId: answer.deviceId,
            eventIdsPath: eventIdsPath, client: client)
    }

    /// The path of a room's endpoint under `/_matrix/client/v3/rooms/{roomId}`.
    func roomPath(_ roomId: String, _ rest: String) -> String {
        "/_matrix/client/v3/rooms/\(MatrixHTTP.segment(roomId))\(rest)"
    }

    /// Makes an authenticated call.
    func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], json: JSONValue? = nil,
        extraTimeout: TimeAmount = .zero, as answer: Answer.Type
    ) async throws -> Answer {
        try await http.call(method, path, query: query, json: json, token: accessToken, extraTimeout: extraTimeout, as: answer)
    }

    /// Warns once per room that its encrypted events are skipped.
    func skipEncrypted(in roomId: String) {
        let first = warnedRooms.withLock { $0.insert(roomId).inserted }
        if first { logger.warning("\(roomId) is end-to-end encrypted; ChatSyncMatrix skips its encrypted events") }
    }

    /// The ChatSync messages among `events` of a room, with their ids stored, in the
    /// order given. Edits, redacted events, state and encrypted events are left out.
    func messages(of events: [MatrixEvent], in roomId: String) throws -> [Message] {
        if events.contains(where: { $0.type == "m.room.encrypted" }) { skipEncrypted(in: roomId) }
        let shown = events.filter(MatrixMessageMapping.isMessage)
        let parents = shown.compactMap(MatrixMessageMapping.replyTarget)
        let known = try ids.ids(for: (shown.map(\.eventId) + parents).map { ($0, roomId) })
        return shown.map { event in
            let parent = MatrixMessageMapping.replyTarget(event).flatMap { known[$0] }
            return MatrixMessageMapping.message(event, roomId: roomId, ids: known, parentId: parent)
        }
    }

    /// One event of a room, with the newest edit bundled.
    func event(_ eventId: String, in roomId: String) async throws -> MatrixEvent {
        try await call(.GET, roomPath(roomId, "/event/\(MatrixHTTP.segment(eventId))"), as: MatrixEvent.self)
    }

    /// The event a ChatSync message id stands for.
    func eventId(of messageId: Int64, in roomId: String) throws -> String {
        guard let known = try ids.event(for: messageId), known.roomId == roomId else {
            throw ChatServiceError.permanent(.notFound, "message \(messageId) of \(roomId) is not known on this device")
        }
        return known.eventId
    }
}
