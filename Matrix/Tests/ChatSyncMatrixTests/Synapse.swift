import AsyncHTTPClient
import ChatSync
import Foundation
import NIOCore
import NIOHTTP1

@testable import ChatSyncMatrix

#if canImport(Glibc)
    import Glibc
#endif

/// A real Synapse on 127.0.0.1, in a directory of its own: started from the virtual
/// environment `scripts/synapse.sh install` made, stopped (or killed) by the test.
final class Synapse: Sendable {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let venv = packageRoot.appendingPathComponent(".synapse/venv")

    let directory: URL
    let port: Int
    let process: Process
    var baseURL: String { "http://127.0.0.1:\(port)" }
    var configPath: String { directory.appendingPathComponent("homeserver.yaml").path }

    private init(directory: URL, port: Int, process: Process) {
        self.directory = directory
        self.port = port
        self.process = process
    }

    /// Configures and starts a new homeserver, and waits until it answers.
    static func start() async throws -> Synapse {
        guard FileManager.default.fileExists(atPath: venv.appendingPathComponent("bin/python").path) else {
            throw SynapseError("Synapse is not installed: run Matrix/scripts/synapse.sh install")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("synapse-\(UUID().uuidString)")
        let port = try freePort()
        try run(packageRoot.appendingPathComponent("scripts/synapse.sh").path, ["config", directory.path, String(port)])
        return try await launch(directory: directory, port: port)
    }

    /// Starts the homeserver again on the same database and port (after ``kill()``).
    func restart() async throws -> Synapse {
        try await Self.launch(directory: directory, port: port)
    }

    private static func launch(directory: URL, port: Int) async throws -> Synapse {
        let process = Process()
        process.executableURL = venv.appendingPathComponent("bin/python")
        process.arguments = ["-m", "synapse.app.homeserver", "-c", directory.appendingPathComponent("homeserver.yaml").path]
        process.currentDirectoryURL = directory
        let log = directory.appendingPathComponent("stdout.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let server = Synapse(directory: directory, port: port, process: process)
        try await server.waitUntilAnswering()
        return server
    }

    /// Polls `/versions` until the homeserver answers (bounded: two minutes).
    private func waitUntilAnswering() async throws {
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
    func register(_ user: String, password: String = "secret") throws {
        try Self.run(
            Self.venv.appendingPathComponent("bin/register_new_matrix_user").path,
            ["-c", configPath, "-u", user, "-p", password, "--no-admin", baseURL])
    }

    /// Logs a user in (a new device unless `deviceId` names one).
    func login(_ user: String, deviceId: String? = nil, eventIdsPath: String? = nil) async throws -> MatrixChatService {
        try await MatrixChatService.login(
            homeserver: baseURL, user: user, password: "secret", deviceId: deviceId, eventIdsPath: eventIdsPath)
    }

    /// Stops the homeserver as an administrator would (SIGTERM), and kills it when it
    /// has not exited ten seconds later: Synapse waits for open long polls on SIGTERM.
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(100)) }
        kill()
    }

    /// Kills the homeserver with SIGKILL, as a crash would.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops the homeserver and removes its files.
    func cleanUp() async {
        await stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
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

/// Why the test homeserver could not be used.
struct SynapseError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension MatrixChatService {
    /// Creates a room with a name and members, who join it at once (test set-up).
    func createRoom(name: String, joining others: [MatrixChatService]) async throws -> String {
        struct Created: Decodable {
            var roomId: String
            enum CodingKeys: String, CodingKey { case roomId = "room_id" }
        }
        let body: JSONValue = .object([
            "name": .string(name), "preset": .string("private_chat"),
            "invite": .array(others.map { .string($0.userId) }),
        ])
        let room = try await call(.POST, "/_matrix/client/v3/createRoom", json: body, as: Created.self).roomId
        for other in others {
            _ = try await other.call(.POST, "/_matrix/client/v3/join/\(MatrixHTTP.segment(room))", json: .object([:]), as: JSONValue.self)
        }
        return room
    }
}
