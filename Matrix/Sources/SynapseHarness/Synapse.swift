import AsyncHTTPClient
import ChatSyncMatrix
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// SIGKILL, as a crash or a power cut would end a process.
private func sendSIGKILL(to pid: Int32) {
    #if canImport(Glibc)
        _ = Glibc.kill(pid, SIGKILL)
    #elseif canImport(Darwin)
        _ = Darwin.kill(pid, SIGKILL)
    #endif
}

/// A real Synapse on 127.0.0.1, in a directory of its own: started from the virtual
/// environment `scripts/synapse.sh install` made, stopped (or killed and restarted) by
/// its owner, the tests or the demo.
public final class Synapse: Sendable {
    /// The `Matrix/` package's directory.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let venv = packageRoot.appendingPathComponent(".synapse/venv")

    /// Whether `scripts/synapse.sh install` has run.
    public static var isInstalled: Bool {
        FileManager.default.fileExists(atPath: venv.appendingPathComponent("bin/python").path)
    }

    /// The homeserver's files: configuration, database, logs.
    public let directory: URL
    /// The loopback port it listens on.
    public let port: Int
    /// The running process; a restart replaces it.
    private let current: Mutex<Process>
    /// The base URL of its client API.
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    var configPath: String { directory.appendingPathComponent("homeserver.yaml").path }

    private init(directory: URL, port: Int, process: Process) {
        self.directory = directory
        self.port = port
        current = Mutex(process)
    }

    /// Configures and starts a new homeserver, and waits until it answers.
    public static func start() async throws -> Synapse {
        guard isInstalled else { throw SynapseError("Synapse is not installed: run Matrix/scripts/synapse.sh install") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("synapse-\(UUID().uuidString)")
        let port = try freePort()
        try run(packageRoot.appendingPathComponent("scripts/synapse.sh").path, ["config", directory.path, String(port)])
        let server = Synapse(directory: directory, port: port, process: try launch(in: directory))
        do {
            try await server.waitUntilAnswering()
        } catch {
            await server.cleanUp()
            throw error
        }
        return server
    }

    /// Starts the homeserver again on the same database and port, after ``kill()``.
    public func restart() async throws {
        let process = try Self.launch(in: directory)
        current.withLock { $0 = process }
        try await waitUntilAnswering()
    }

    private static func launch(in directory: URL) throws -> Process {
        let process = Process()
        process.executableURL = venv.appendingPathComponent("bin/python")
        process.arguments = ["-m", "synapse.app.homeserver", "-c", directory.appendingPathComponent("homeserver.yaml").path]
        process.currentDirectoryURL = directory
        let log = directory.appendingPathComponent("stdout.log")
        if !FileManager.default.fileExists(atPath: log.path) { _ = FileManager.default.createFile(atPath: log.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// Polls `/versions` until the homeserver answers (bounded: two minutes).
    private func waitUntilAnswering() async throws {
        let process = current.withLock { $0 }
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            guard process.isRunning else {
                let log = (try? String(contentsOf: directory.appendingPathComponent("stdout.log"), encoding: .utf8)) ?? ""
                throw SynapseError("Synapse exited at start: \(log.suffix(2_000))")
            }
            var request = HTTPClientRequest(url: baseURL + "/_matrix/client/versions")
            request.method = .GET
            if let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(2)), response.status == .ok {
                return
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw SynapseError("Synapse did not answer within two minutes")
    }

    /// Registers a user by the shared secret.
    public func register(_ user: String, password: String = "secret") throws {
        try Self.run(
            Self.venv.appendingPathComponent("bin/register_new_matrix_user").path,
            ["-c", configPath, "-u", user, "-p", password, "--no-admin", baseURL])
    }

    /// Logs a user in with the password ``register(_:password:)`` gave (a new device
    /// unless `deviceId` names one).
    public func login(_ user: String, deviceId: String? = nil, eventIdsPath: String? = nil) async throws -> MatrixChatService {
        try await MatrixChatService.login(
            homeserver: baseURL, user: user, password: "secret", deviceId: deviceId, eventIdsPath: eventIdsPath)
    }

    /// Stops the homeserver as an administrator would (SIGTERM), and kills it when it
    /// has not exited ten seconds later: Synapse waits for open long polls on SIGTERM.
    public func stop() async {
        let process = current.withLock { $0 }
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        kill()
    }

    /// Kills the homeserver with SIGKILL, as a crash or a power cut would.
    public func kill() {
        let process = current.withLock { $0 }
        guard process.isRunning else { return }
        sendSIGKILL(to: process.processIdentifier)
        process.waitUntilExit()
    }

    /// Stops the homeserver and removes its files.
    public func cleanUp() async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SynapseError("\(executable) \(arguments.joined(separator: " ")) failed: \(String(decoding: data, as: UTF8.self))")
        }
    }

    /// A TCP port nobody listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SynapseError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw SynapseError("bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw SynapseError("getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why the local homeserver could not be used.
public struct SynapseError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }

    /// Something awaited did not happen in time.
    public static func timedOut(_ what: String) -> SynapseError { SynapseError("timed out waiting for \(what)") }
}
