import AsyncHTTPClient
import ChatServer
import Foundation
import NIOCore
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `RunningChatServer.stop()` ends in bounded time whatever its clients do. Real time,
/// as in the loopback tests: each wait is bounded and only catches a hang.
@Suite("Server shutdown", .serialized)
struct ServerShutdownTests {
    /// A request body that sends its first bytes, says so, and then never sends the rest:
    /// a client that went quiet mid-upload (a phone that lost its radio).
    struct StalledBody: AsyncSequence, Sendable {
        typealias Element = ByteBuffer
        let firstBytesSent: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>

        struct AsyncIterator: AsyncIteratorProtocol {
            let body: StalledBody
            var sentFirst = false

            mutating func next() async -> ByteBuffer? {
                guard sentFirst else {
                    sentFirst = true
                    return ByteBuffer(bytes: Array(repeating: 7, count: 10))
                }
                // Asked for more: the first bytes were handed to the connection.
                body.firstBytesSent.yield()
                for await _ in body.release {}
                return nil
            }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }
    }

    /// Stops `running` in a task of its own and waits at most a minute for it to return.
    /// Answers whether it did, and the task, to await once the test has let its client go
    /// (a server that did not stop may need that).
    func stopWithinAMinute(_ running: RunningChatServer) async throws -> (Bool, Task<Void, Never>) {
        let stopped = Mutex(false)
        let stopping = Task {
            await running.stop()
            stopped.withLock { $0 = true }
        }
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while !stopped.withLock({ $0 }) && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        return (stopped.withLock { $0 }, stopping)
    }

    /// Found by the loopback test of a server restart, which once took ten minutes in CI:
    /// the graceful shutdown waited, without bound, for a connection that it could not
    /// close, until the client's pool let it go. A request whose body never ends is
    /// such a connection, every time.
    @Test func stopEndsARequestWhoseBodyNeverEnds() async throws {
        let server = try ChatServer(databasePath: nil)
        let token = try server.addUser("alice")
        try await server.createChannel("general", members: ["alice"], name: "General")
        let running = try await server.start(shutdownGracePeriod: .milliseconds(200))

        let (sent, sentContinuation) = AsyncStream<Void>.makeStream()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        var request = HTTPClientRequest(url: "\(running.baseURL)/channels/general/files?name=a.bin&mimeType=application/octet-stream")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.body = .stream(StalledBody(firstBytesSent: sentContinuation, release: release), length: .known(Int64(1_000)))
        let upload = Task { try await HTTPClient.shared.execute(request, timeout: .seconds(120)) }
        var sentIterator = sent.makeAsyncIterator()
        await sentIterator.next()
        // Let the server read what was sent, so that the request is in progress there. Were
        // it slower than this, the test would only be weaker: it cannot turn red by it.
        try await Task.sleep(for: .milliseconds(100))

        let (returned, stopping) = try await stopWithinAMinute(running)
        #expect(returned, "stop() returned while a request's body was still awaited")

        // Let go of the request either way, so that a server that did not stop can.
        releaseContinuation.finish()
        await stopping.value
        let answer = try? await upload.value
        #expect(answer?.status != .ok, "the stalled upload was not stored")
    }

    /// A client that connects and never sends a request head (a port scanner, a phone gone
    /// quiet right after connecting) holds a connection that neither the graceful shutdown
    /// nor the cancellation after it ends (Hummingbird waits for the first head without
    /// heeding either): `stop()` still returns, once its bound has passed.
    @Test func stopReturnsWhileAClientThatNeverSpokeHoldsItsConnection() async throws {
        let server = try ChatServer(databasePath: nil)
        let running = try await server.start(shutdownGracePeriod: .milliseconds(200))
        let silent = try SilentConnection(port: running.port)
        defer { silent.close() }
        // Let the server accept it. Were it slower than this, the test would only be weaker.
        try await Task.sleep(for: .milliseconds(100))

        let (returned, stopping) = try await stopWithinAMinute(running)
        #expect(returned, "stop() returned while a client that never spoke held its connection")
        silent.close()
        await stopping.value
        // No longer listened on: the port takes a new server.
        let again = try await server.start(port: running.port, shutdownGracePeriod: .milliseconds(200))
        await again.stop()
    }
}

/// A TCP connection to 127.0.0.1 that sends nothing.
final class SilentConnection: Sendable {
    /// The socket until closed: closed once only, since another test of this process may
    /// be given the same number as soon as it is.
    private let descriptor: Mutex<Int32?>

    init(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, size) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        self.descriptor = Mutex(descriptor)
    }

    /// Closes it, once.
    func close() {
        if let open = descriptor.withLock({ $0.take() }) { _ = Glibc.close(open) }
    }
}
