import ChatSync
import Foundation
import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The HTTP API. Every route needs `Authorization: Bearer <token>` and answers JSON.
///
/// | method and path | body / query | answer |
/// | --- | --- | --- |
/// | `GET /channels` | `order`, `includeEmpty`, `customTypes`, `limit`, `cursor` | `ChannelPage` |
/// | `GET /channels/changelogs` | `token`, `limit` | `ChannelChangeLogs` |
/// | `POST /channels/{url}/messages/query` | `MessageQuery` | `MessagePage` |
/// | `GET /channels/{url}/messages/changelogs` | `token`, `limit` | `MessageChangeLogs` |
/// | `POST /channels/{url}/messages/lookup` | `{"reqIds": [...]}` | `[Message]` |
/// | `POST /channels/{url}/messages` | `SendMessageRequest` (idempotent by reqId) | `Message` |
/// | `PATCH /channels/{url}/messages/{id}` | `{"text": "..."}` (idempotent by `Idempotency-Key`) | `Message` |
/// | `DELETE /channels/{url}/messages/{id}` | (idempotent by `Idempotency-Key`) | 204 |
/// | `POST /channels/{url}/files` | the bytes; `name`, `mimeType` | `FileInfo` |
/// | `GET /files/{id}` | | the bytes |
/// | `GET /ws?token=` | WebSocket upgrade | `ServiceEvent` JSON frames |
extension ChatServer {
    struct LookUpBody: Codable { var reqIds: [String] }
    struct EditBody: Codable { var text: String }

    /// The `Idempotency-Key` header: names an edit or deletion, so that a repeat is applied once.
    func idempotencyKey(_ request: Request) -> String? {
        request.headers.first { $0.name.canonicalName == "idempotency-key" }?.value
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.middlewares.add(ErrorMiddleware())
        router.get("/ws") { _, _ -> Response in throw ServerError.unauthorized }
        router.get("/files/:id") { [self] _, context -> Response in
            guard let id = context.parameters.get("id", as: Int64.self), let file = try database.file(id) else {
                throw ServerError.notFound("no such file")
            }
            return Response(status: .ok, headers: [.contentType: file.mimeType], body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
        }
        router.get("/channels") { [self] request, _ -> Response in
            let user = try authenticate(request)
            let query = ChannelPageQuery(
                order: request.uri.queryParameters.get("order").flatMap(ChannelOrder.init(rawValue:)) ?? .latestLastMessage,
                includeEmpty: request.uri.queryParameters.get("includeEmpty") != "false",
                customTypes: request.uri.queryParameters.get("customTypes").map { Set($0.split(separator: ",").map(String.init)) },
                limit: request.uri.queryParameters.get("limit").flatMap(Int.init) ?? 20,
                cursor: request.uri.queryParameters.get("cursor"))
            return try json(try database.channelPage(query, for: user))
        }
        router.get("/channels/changelogs") { [self] request, _ -> Response in
            let user = try authenticate(request)
            let limit = request.uri.queryParameters.get("limit").flatMap(Int.init) ?? 100
            return try json(try database.channelChangeLogs(token: request.uri.queryParameters.get("token"), limit: limit, for: user))
        }
        router.post("/channels/:url/messages/query") { [self] request, context -> Response in
            let user = try authenticate(request)
            var query = try await decode(MessageQuery.self, from: request)
            query.channelURL = try channelURL(context)
            return try json(try database.fetch(query, for: user))
        }
        router.get("/channels/:url/messages/changelogs") { [self] request, context -> Response in
            let user = try authenticate(request)
            let limit = request.uri.queryParameters.get("limit").flatMap(Int.init) ?? 100
            return try json(
                try database.changeLogs(
                    channelURL: try channelURL(context), token: request.uri.queryParameters.get("token"), limit: limit, for: user))
        }
        router.post("/channels/:url/messages/lookup") { [self] request, context -> Response in
            let user = try authenticate(request)
            let body = try await decode(LookUpBody.self, from: request)
            return try json(try database.lookUp(channelURL: try channelURL(context), reqIds: body.reqIds, for: user))
        }
        router.post("/channels/:url/messages") { [self] request, context -> Response in
            let user = try authenticate(request)
            var send = try await decode(SendMessageRequest.self, from: request)
            send.channelURL = try channelURL(context)
            guard !send.reqId.isEmpty else { throw ServerError.badRequest("reqId is required") }
            return try json(try await self.send(send, from: user))
        }
        router.patch("/channels/:url/messages/:id") { [self] request, context -> Response in
            let user = try authenticate(request)
            let body = try await decode(EditBody.self, from: request)
            guard !body.text.isEmpty else { throw ServerError.badRequest("text must not be empty") }
            return try json(
                try await changeMessage(
                    channelURL: try channelURL(context), messageId: try messageId(context), text: body.text, by: user,
                    operationId: idempotencyKey(request)))
        }
        router.delete("/channels/:url/messages/:id") { [self] request, context -> Response in
            let user = try authenticate(request)
            _ = try await changeMessage(
                channelURL: try channelURL(context), messageId: try messageId(context), text: nil, by: user,
                operationId: idempotencyKey(request))
            return Response(status: .noContent)
        }
        router.post("/channels/:url/files") { [self] request, context -> Response in
            let user = try authenticate(request)
            let url = try channelURL(context)
            let name = request.uri.queryParameters.get("name") ?? "file"
            let mimeType = request.uri.queryParameters.get("mimeType") ?? "application/octet-stream"
            let body = try await collect(request)
            let id = try database.storeFile(Data(buffer: body), name: name, mimeType: mimeType, channelURL: url, for: user)
            let host = request.head.authority ?? "localhost"
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "file"
            return try json(
                FileInfo(name: name, mimeType: mimeType, size: Int64(body.readableBytes), url: "http://\(host)/files/\(id)?name=\(encoded)")
            )
        }
        return router
    }

    // MARK: Helpers

    func authenticate(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            let user = try database.user(forToken: String(header.dropFirst(7)))
        else { throw ServerError.unauthorized }
        return user
    }

    private func channelURL(_ context: BasicRequestContext) throws -> String {
        guard let url = context.parameters.get("url")?.removingPercentEncoding, !url.isEmpty else {
            throw ServerError.badRequest("missing channel")
        }
        return url
    }

    private func messageId(_ context: BasicRequestContext) throws -> Int64 {
        guard let id = context.parameters.get("id", as: Int64.self) else { throw ServerError.badRequest("bad message id") }
        return id
    }

    private func collect(_ request: Request) async throws -> ByteBuffer {
        do {
            return try await request.body.collect(upTo: Self.maxBodySize)
        } catch {
            throw ServerError.tooLarge("the body is larger than \(Self.maxBodySize) bytes")
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let body = try await collect(request)
        do {
            return try JSONDecoder().decode(type, from: Data(buffer: body))
        } catch {
            throw ServerError.badRequest("malformed \(T.self): \(error)")
        }
    }

    private func json(_ value: some Encodable) throws -> Response {
        let data = try JSONEncoder().encode(value)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: WebSocket

    /// Upgrades `GET /ws?token=…` for a known user; anything else goes to the router (401).
    func upgrade(_ request: HTTPRequest) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        let components = URLComponents(string: request.path ?? "")
        guard components?.path == "/ws", let token = components?.queryItems?.first(where: { $0.name == "token" })?.value,
            let user = try? database.user(forToken: token)
        else { return .dontUpgrade }
        return .upgrade([:]) { [self] inbound, outbound, _ in
            let (id, events) = await hub.connect(user)
            logger.info("websocket open", metadata: ["user": "\(user)"])
            defer { logger.info("websocket closed", metadata: ["user": "\(user)"]) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in inbound {}  // until the client closes
                }
                group.addTask {
                    for await event in events {
                        let text = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
                        try await outbound.write(.text(text))
                    }
                }
                try await group.next()
                group.cancelAll()
            }
            await hub.disconnect(user, id)
        }
    }
}

/// Turns thrown errors into JSON error answers; unknown errors become 500.
struct ErrorMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServerError {
            return Self.answer(error)
        } catch let error as HTTPError {
            return Self.answer(ServerError(Int(error.status.code), error.body ?? error.status.reasonPhrase))
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return Self.answer(ServerError(500, "internal error"))
        }
    }

    static func answer(_ error: ServerError) -> Response {
        let data = (try? JSONEncoder().encode(ServerError.Body(error: error))) ?? Data()
        return Response(
            status: HTTPResponse.Status(code: error.code), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
