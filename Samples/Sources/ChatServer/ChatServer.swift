import ChatSync
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import ServiceLifecycle

/// The reference chat server: a JSON HTTP API for everything `ChatService` needs and a
/// WebSocket for real-time events, persisted in SQLite so a restart loses nothing.
///
/// ```swift
/// let server = try ChatServer(databasePath: "/tmp/chat.sqlite")
/// let alice = try server.addUser("alice")            // answers alice's bearer token
/// try server.createChannel("general", members: ["alice", "bob"])
/// let running = try await server.start(host: "127.0.0.1", port: 0)
/// print(running.baseURL)                              // http://127.0.0.1:54321
/// await running.stop()
/// ```
///
/// A user sees and writes only the channels they belong to: a request without a valid
/// token gets 401, one for another channel 403; malformed requests get a 4xx with a
/// JSON error body and change nothing.
public final class ChatServer: Sendable {
    let database: ServerDatabase
    let hub = EventHub()
    let logger: Logger
    /// The largest request body accepted (uploads included).
    public static let maxBodySize = 8 * 1024 * 1024

    /// Opens (or creates) the server's database; `nil` keeps it in memory.
    public init(databasePath: String?, logger: Logger = Logger(label: "ChatServer")) throws {
        database = try ServerDatabase(path: databasePath)
        self.logger = logger
    }

    // MARK: - Administration (in-process)

    /// Adds a user (or gives them a new token); answers the bearer token.
    @discardableResult
    public func addUser(_ id: String, token: String? = nil) throws -> String {
        let token = token ?? "\(id)-\(UUID().uuidString.prefix(8).lowercased())"
        try database.addUser(id, token: token)
        return token
    }

    /// Creates a channel with its members.
    @discardableResult
    public func createChannel(_ url: String, members: [String], name: String = "", customType: String = "") async throws -> ChatSync.Channel
    {
        let channel = try database.createChannel(url, name: name, customType: customType, members: members)
        await hub.send(.channelChanged(channel), to: members)
        return channel
    }

    /// Stores a message as if `user` sent it from another client, and pushes it live.
    @discardableResult
    public func post(_ params: MessageParams, from user: String, to channelURL: String) async throws -> Message {
        let request = SendMessageRequest(
            reqId: "", channelURL: channelURL, kind: params.kind, text: params.text, customType: params.customType,
            data: params.data, parentMessageId: params.parentMessageId)
        return try await send(request, from: user)
    }

    /// The channel's live messages, ascending: the server's truth.
    public func messages(in channelURL: String) throws -> [Message] { try database.messages(in: channelURL) }

    /// A channel as stored.
    public func channel(_ url: String) throws -> ChatSync.Channel? { try database.channel(url) }

    /// The edits and deletions applied under an operation id (`Idempotency-Key`), in order.
    public func appliedOperations() throws -> [AppliedOperation] { try database.operations() }

    // MARK: - Shared by routes and administration

    func send(_ request: SendMessageRequest, from user: String) async throws -> Message {
        let (message, isNew, members) = try database.send(request, from: user)
        if isNew {
            logger.info(
                "message stored", metadata: ["channel": "\(message.channelURL)", "id": "\(message.messageId)", "sender": "\(user)"])
            await hub.send(.messageReceived(message), to: members)
        }
        return message
    }

    func changeMessage(
        channelURL: String, messageId: Int64, text: String?, by user: String?, operationId: String? = nil
    ) async throws -> Message {
        let (message, members, applied) = try database.change(
            channelURL: channelURL, messageId: messageId, text: text, by: user, operationId: operationId)
        guard applied else { return message }
        let event: ServiceEvent = text == nil ? .messageDeleted(channelURL: channelURL, messageId: messageId) : .messageUpdated(message)
        await hub.send(event, to: members)
        return message
    }

    // MARK: - Running

    /// Starts serving on `host`:`port` (`0` picks a free port) and answers once it listens.
    ///
    /// - Parameter shutdownGracePeriod: how long ``RunningChatServer/stop()`` lets
    ///   requests in progress finish before it closes their connections.
    public func start(
        host: String = "127.0.0.1", port: Int = 0, shutdownGracePeriod: Duration = .seconds(5)
    ) async throws -> RunningChatServer {
        let router = makeRouter()
        let listening = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade { [self] request, _, _ in
                await self.upgrade(request)
            },
            configuration: .init(address: .hostname(host, port: port), serverName: "ChatSync reference server"),
            onServerRunning: { channel in
                listening.continuation.yield(channel.localAddress?.port ?? port)
                listening.continuation.finish()
            },
            logger: logger)
        // A service group of its own, so that stop() can shut it down gracefully. The
        // grace is bounded: a connection the server cannot close gracefully (a request
        // whose body never ends, a client's idle keep-alive connection that missed the
        // shutdown) would otherwise hold stop() until the client lets go, which for a
        // pooled HTTP client is its idle timeout (ten minutes for `HTTPClient.shared`).
        var configuration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownGracePeriod
        let group = ServiceGroup(configuration: configuration)
        // The stream also ends when the group stops, so that a server that never listens
        // (its port taken, its host unknown) ends the wait below and its error is thrown
        // instead of start() waiting forever.
        let task = Task {
            defer { listening.continuation.finish() }
            try await group.run()
        }
        var ports = listening.stream.makeAsyncIterator()
        guard let bound = await ports.next() else {
            await group.triggerGracefulShutdown()
            _ = try await task.value
            throw ServerError(500, "the server stopped before it listened")
        }
        logger.info("listening", metadata: ["host": "\(host)", "port": "\(bound)"])
        return RunningChatServer(
            server: self, host: host, port: bound, group: group, task: task, shutdownGracePeriod: shutdownGracePeriod)
    }
}

/// A server that is listening; ``stop()`` closes its connections and stops it.
public final class RunningChatServer: Sendable {
    /// The server it runs.
    public let server: ChatServer
    /// The address it listens on.
    public let host: String
    /// The port it listens on.
    public let port: Int
    private let group: ServiceGroup
    private let task: Task<Void, any Error>
    private let shutdownGracePeriod: Duration
    /// How long ``stop()`` waits, after the grace period, for connections to heed the
    /// cancellation that follows it.
    static let cancellationAllowance = Duration.seconds(5)

    init(
        server: ChatServer, host: String, port: Int, group: ServiceGroup, task: Task<Void, any Error>,
        shutdownGracePeriod: Duration
    ) {
        self.server = server
        self.host = host
        self.port = port
        self.group = group
        self.task = task
        self.shutdownGracePeriod = shutdownGracePeriod
    }

    /// `http://host:port`.
    public var baseURL: String { "http://\(host):\(port)" }

    /// Closes every WebSocket, stops listening and waits until the server is down:
    /// requests in progress get the grace period given to ``ChatServer/start(host:port:shutdownGracePeriod:)``,
    /// then their connections are closed.
    ///
    /// The wait is bounded by the grace period plus five seconds. A connection whose client
    /// never sent a request heeds neither the shutdown nor the cancellation after it (the
    /// HTTP server waits for that request first), so it may outlive `stop()`, which then
    /// logs a warning: it is no longer listened on, and ends when its client lets go.
    public func stop() async {
        await server.hub.closeAll()
        await group.triggerGracefulShutdown()
        let (ended, end) = AsyncStream<Bool>.makeStream()
        let task = self.task
        // Neither waiter can be cancelled out of its wait, so each ends the stream itself.
        let waiter = Task {
            _ = try? await task.value
            end.yield(true)
            end.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: shutdownGracePeriod + Self.cancellationAllowance)
            end.yield(false)
            end.finish()
        }
        var iterator = ended.makeAsyncIterator()
        let down = await iterator.next() ?? false
        timer.cancel()
        if !down {
            server.logger.warning("stopped with connections still open (a client that never sent a request holds one)")
        }
        _ = waiter  // ends with the group's run, whenever its last connection closes
    }

    /// Waits until the server stops by itself (or is stopped).
    public func wait() async throws {
        try await task.value
    }
}
