import AsyncHTTPClient
import ChatSync
import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

/// A `ChatService` over the reference server's HTTP API and WebSocket: what an app would
/// write to connect ChatSync to its own backend.
///
/// ```swift
/// let service = HTTPChatService(baseURL: "http://127.0.0.1:8080", token: aliceToken)
/// let manager = try await SyncManager(userId: "alice", service: service, databasePath: path)
/// ```
///
/// Network failures, timeouts, 5xx and 429 are transient errors; other 4xx are
/// permanent. The WebSocket reconnects with backoff (0.5 s doubling to 10 s) and reports
/// `.connecting`, `.online` and `.offline`.
public final class HTTPChatService: ChatService {
    /// `http://host:port` of the server.
    public let baseURL: String
    let token: String
    let client: HTTPClient
    let logger: Logger
    /// How long one request may take.
    public let timeout: TimeAmount
    /// How long a client that can reach nothing waits before it tries the WebSocket again, at most.
    public let maxBackoff: Duration

    /// Creates a service for the user whose bearer token is `token`.
    public init(
        baseURL: String, token: String, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(10),
        maxBackoff: Duration = .seconds(10), logger: Logger = Logger(label: "HTTPChatService")
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.token = token
        self.client = client
        self.timeout = timeout
        self.maxBackoff = maxBackoff
        self.logger = logger
    }

    // MARK: - Requests

    static func path(_ channelURL: String) -> String {
        channelURL.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? channelURL
    }

    private func call<T: Decodable>(
        _ method: HTTPMethod, _ path: String, query: [String: String?] = [:],
        body: HTTPClientRequest.Body? = nil, idempotencyKey: String? = nil, as type: T.Type
    ) async throws -> T {
        try Self.decode(
            T.self, from: try await send(method, path, query: query, body: body, idempotencyKey: idempotencyKey), answering: path)
    }

    /// Reads a server answer; anything unreadable (malformed, truncated, wrong types,
    /// unknown enum values) is a transient ``ChatServiceError/Code/badResponse``, never a crash.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, answering path: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ChatServiceError.transient(.badResponse, "could not read the server's answer to \(path): \(error)")
        }
    }

    @discardableResult
    private func send(
        _ method: HTTPMethod, _ path: String, query: [String: String?] = [:],
        body: HTTPClientRequest.Body? = nil, idempotencyKey: String? = nil
    ) async throws -> Data {
        var components = URLComponents(string: baseURL + path)
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }.sorted { $0.name < $1.name }
        if !items.isEmpty { components?.queryItems = items }
        guard let url = components?.url?.absoluteString else { throw ChatServiceError.permanent(.invalid, "bad URL \(path)") }
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = body
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: timeout)
            bytes = try await response.body.collect(upTo: 16 * 1024 * 1024)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw ChatServiceError.transient(.timeout, "\(method) \(path) timed out")
        } catch {
            throw ChatServiceError.transient(.network, "\(method) \(path): \(error)")
        }
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(Int(response.status.code)) else {
            let message = (try? JSONDecoder().decode(ErrorBody.self, from: data))?.error.message ?? response.status.reasonPhrase
            throw ChatServiceError.http(status: Int(response.status.code), message: message)
        }
        return data
    }

    private struct ErrorBody: Decodable {
        struct Detail: Decodable { var message: String }
        var error: Detail
    }

    private static func json(_ value: some Encodable) throws -> HTTPClientRequest.Body {
        .bytes(ByteBuffer(bytes: try JSONEncoder().encode(value)))
    }

    // MARK: - ChatService

    public func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        try await call(.POST, "/channels/\(Self.path(query.channelURL))/messages/query", body: try Self.json(query), as: MessagePage.self)
    }

    public func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try await call(
            .GET, "/channels/\(Self.path(channelURL))/messages/changelogs",
            query: ["token": token, "limit": String(limit)], as: MessageChangeLogs.self)
    }

    public func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try await call(
            .POST, "/channels/\(Self.path(channelURL))/messages/lookup",
            body: try Self.json(["reqIds": reqIds]), as: [Message].self)
    }

    public func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        try await call(.POST, "/channels/\(Self.path(request.channelURL))/messages", body: try Self.json(request), as: Message.self)
    }

    public func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        let bytes: Data
        do {
            bytes = try Data(contentsOf: URL(fileURLWithPath: request.localPath))
        } catch {
            throw ChatServiceError.permanent(.invalid, "cannot read \(request.localPath): \(error)")
        }
        // Stream the file in 64 KiB pieces, reporting progress as each one is taken.
        let pieceSize = 64 * 1024
        let total = max(bytes.count, 1)
        let pieces = stride(from: 0, to: bytes.count, by: pieceSize).map { offset in
            (
                ByteBuffer(bytes: bytes[offset..<min(offset + pieceSize, bytes.count)]),
                Double(min(offset + pieceSize, bytes.count)) / Double(total)
            )
        }
        let stream = AsyncStream<ByteBuffer> { continuation in
            for (piece, fraction) in pieces {
                continuation.yield(piece)
                progress(fraction)
            }
            continuation.finish()
        }
        let info = try await call(
            .POST, "/channels/\(Self.path(request.channelURL))/files", query: ["name": request.name, "mimeType": request.mimeType],
            body: .stream(stream, length: .known(Int64(bytes.count))), as: FileInfo.self)
        progress(1)
        return info
    }

    public func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        try await call(
            .PATCH, "/channels/\(Self.path(channelURL))/messages/\(messageId)", body: try Self.json(["text": text]),
            idempotencyKey: operationId, as: Message.self)
    }

    public func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        try await send(.DELETE, "/channels/\(Self.path(channelURL))/messages/\(messageId)", idempotencyKey: operationId)
    }

    public func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage {
        try await call(
            .GET, "/channels",
            query: [
                "order": query.order.rawValue, "includeEmpty": String(query.includeEmpty),
                "customTypes": query.customTypes.map { $0.sorted().joined(separator: ",") }, "limit": String(query.limit),
                "cursor": query.cursor,
            ], as: ChannelPage.self)
    }

    public func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try await call(.GET, "/channels/changelogs", query: ["token": token, "limit": String(limit)], as: ChannelChangeLogs.self)
    }

    // MARK: - Real-time events

    /// A WebSocket to `/ws`, opened again with backoff whenever it drops, until the
    /// stream's consumer stops.
    public func events() async -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        continuation.yield(.connectionChanged(.connecting))
        let url = baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/ws?token=\(token)"
        let (logger, maxBackoff) = (logger, maxBackoff)
        let task = Task {
            var backoff = Duration.milliseconds(500)
            while !Task.isCancelled {
                let connected = ConnectedFlag()
                do {
                    try await WebSocketClient.connect(url: url, logger: logger) { inbound, _, _ in
                        continuation.yield(.connectionChanged(.online))
                        connected.set()
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let text) = message else { continue }
                            do {
                                continuation.yield(try Self.decode(ServiceEvent.self, from: Data(text.utf8), answering: "an event"))
                            } catch {
                                logger.warning("ignoring an event the client cannot read: \(error)")
                            }
                        }
                    }
                } catch {
                    logger.debug("websocket failed: \(error)")
                }
                guard !Task.isCancelled else { break }
                continuation.yield(.connectionChanged(.offline))
                if connected.isSet { backoff = .milliseconds(500) }  // it worked a while: start over quickly
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, maxBackoff)
                guard !Task.isCancelled else { break }
                continuation.yield(.connectionChanged(.connecting))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// Whether a WebSocket connection was established, set from its handler.
private final class ConnectedFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
