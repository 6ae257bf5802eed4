import ArgumentParser
import ChatServer
import Foundation
import Testing

@testable import chat_demo
@testable import chat_server

/// The command lines of chat-server and chat-demo, parsed in-process (the test target
/// depends on both executables, so it can import them): good values give the expected
/// options, bad ones a usage error (exit 64) whose message says what is wrong. Nothing
/// here starts a server or waits for anything; one test per program runs its binary to
/// check that the error really reaches the exit status and standard error.
@Suite("Command line")
struct CommandLineTests {
    /// The message ArgumentParser prints for an error, and the status it exits with.
    typealias Failure = (message: String, exitCode: ExitCode)

    /// What ArgumentParser would print and exit with for `arguments`, or `nil` when they
    /// parse (and validate) without error. `parse`, not `parseAsRoot`: the latter answers
    /// `--help` with a help command instead of throwing the `CleanExit` that `main()` sees.
    static func failure<Command: ParsableCommand>(_ command: Command.Type, _ arguments: [String]) -> Failure? {
        do {
            _ = try command.parse(arguments)
            return nil
        } catch {
            return (command.message(for: error), command.exitCode(for: error))
        }
    }

    // MARK: - chat-server

    @Test("chat-server: no options give the defaults")
    func serverDefaults() throws {
        let command = try ChatServerCommand.parse([])
        #expect(command.databasePath == nil)
        #expect(command.host == "127.0.0.1")
        #expect(command.port == 8080)
        #expect(command.users.isEmpty)
        #expect(command.channels.isEmpty)
    }

    @Test("chat-server: every option parses")
    func serverOptions() throws {
        let command = try ChatServerCommand.parse([
            "--db", "/tmp/chat.sqlite", "--host", "0.0.0.0", "--port", "65535",
            "--user", "alice:alice-token", "--user", "bob", "--user", "carol:", "--user", "dave:a:b",
            "--channel", "general:alice,bob", "--channel", "solo:carol,",
        ])
        #expect(command.databasePath == "/tmp/chat.sqlite")
        #expect(command.host == "0.0.0.0")
        #expect(command.port == 65535)
        #expect(
            command.users == [
                .init(name: "alice", token: "alice-token"), .init(name: "bob", token: nil), .init(name: "carol", token: nil),
                .init(name: "dave", token: "a:b"),
            ])
        #expect(command.channels == [.init(url: "general", members: ["alice", "bob"]), .init(url: "solo", members: ["carol"])])
        #expect(try ChatServerCommand.parse(["--port", "1"]).port == 1)
    }

    @Test("chat-server: a port that is not a number in 1...65535 is a usage error", arguments: ["nope", "0", "70000", "65536", "80x", ""])
    func serverBadPort(_ port: String) throws {
        let failure = try #require(Self.failure(ChatServerCommand.self, ["--port", port]))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("The value '\(port)' is invalid for '--port <port>'"))
        #expect(failure.message.contains("a port is a number in 1...65535"))
    }

    @Test("chat-server: a user without a name is a usage error", arguments: ["", ":token"])
    func serverEmptyUser(_ user: String) throws {
        let failure = try #require(Self.failure(ChatServerCommand.self, ["--user", "alice", "--user", user]))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("a user needs a name"))
    }

    @Test("chat-server: a channel without members is a usage error", arguments: ["general", "general:", "general:,"])
    func serverChannelWithoutMembers(_ channel: String) throws {
        let failure = try #require(Self.failure(ChatServerCommand.self, ["--channel", channel]))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("channel 'general' needs at least one member"))
    }

    @Test("chat-server: a channel without a URL is a usage error", arguments: [":alice,bob", ""])
    func serverChannelWithoutURL(_ channel: String) throws {
        let failure = try #require(Self.failure(ChatServerCommand.self, ["--channel", channel]))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("a channel needs a URL"))
    }

    @Test("chat-server: an empty host, an unknown option and a missing value are usage errors")
    func serverOtherMistakes() throws {
        for arguments in [["--host", ""], ["--bogus"], ["--port"]] {
            let failure = try #require(Self.failure(ChatServerCommand.self, arguments), "\(arguments)")
            #expect(failure.exitCode == .validationFailure, "\(arguments)")
        }
    }

    @Test("chat-server: --help describes every option and shows an example")
    func serverHelp() throws {
        let help = ChatServerCommand.helpMessage(columns: 200)
        for option in ["--db <path>", "--host <host>", "--port <port>", "--user <name[:token]>", "--channel <url:member,member...>"] {
            #expect(help.contains(option), "\(option)")
        }
        #expect(help.contains("Example:\n  swift run --package-path Samples chat-server"))
        #expect(help.contains("(default: 8080)"))
        let failure = try #require(Self.failure(ChatServerCommand.self, ["--help"]))
        #expect(failure.exitCode == .success)
    }

    // MARK: - chat-demo

    /// A server URL that parses, for the cases about the other options.
    static let server = "http://127.0.0.1:8080"

    @Test("chat-demo: no options run the narrated scenario")
    func demoScenario() throws {
        #expect(try ChatDemoCommand.parse([]).interactiveClient == nil)
    }

    @Test("chat-demo: all four interactive options give a client, on #general unless --channel says otherwise")
    func demoInteractive() throws {
        let options = ["--server", Self.server, "--user", "alice", "--token", "alice-token", "--db", "/tmp/alice.sqlite"]
        let client = try #require(try ChatDemoCommand.parse(options).interactiveClient)
        #expect(
            client
                == InteractiveClient(
                    server: Self.server, user: "alice", token: "alice-token", database: "/tmp/alice.sqlite", channel: "general"))
        let elsewhere = try #require(try ChatDemoCommand.parse(options + ["--channel", "random"]).interactiveClient)
        #expect(elsewhere.channel == "random")
        for url in ["https://chat.example.com", "HTTP://[::1]:65535/"] {
            let other = try ChatDemoCommand.parse(["--server", url, "--user", "a", "--token", "t", "--db", "d"])
            #expect(other.interactiveClient?.server == url)
        }
    }

    @Test(
        "chat-demo: some but not all interactive options name the missing ones",
        arguments: [
            (["--server", CommandLineTests.server], "missing --user, --token, --db"),
            (["--server", CommandLineTests.server, "--user", "alice"], "missing --token, --db"),
            (["--server", CommandLineTests.server, "--user", "alice", "--db", "/tmp/a.sqlite"], "missing --token:"),
            (["--user", "alice", "--token", "t", "--db", "/tmp/a.sqlite"], "missing --server:"),
            (["--token", "t"], "missing --server, --user, --db"),
        ])
    func demoPartialInteractive(_ arguments: [String], _ missing: String) throws {
        let failure = try #require(Self.failure(ChatDemoCommand.self, arguments))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.hasPrefix(missing), "\(failure.message)")
        #expect(failure.message.contains("interactive mode needs all of --server, --user, --token, --db"))
    }

    @Test("chat-demo: --channel alone is a usage error rather than a silent scenario")
    func demoChannelAlone() throws {
        let failure = try #require(Self.failure(ChatDemoCommand.self, ["--channel", "general"]))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("--channel is for interactive mode"))
    }

    @Test(
        "chat-demo: an empty user, token, database or channel is a usage error",
        arguments: [("--user", "a user name"), ("--token", "a token"), ("--db", "a database path"), ("--channel", "a channel URL")])
    func demoEmptyValue(_ option: String, _ what: String) throws {
        var arguments = ["--server", Self.server, "--user", "alice", "--token", "t", "--db", "/tmp/a.sqlite"]
        if let index = arguments.firstIndex(of: option) {
            arguments[index + 1] = ""
        } else {
            arguments += [option, ""]
        }
        let failure = try #require(Self.failure(ChatDemoCommand.self, arguments))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("\(what) cannot be empty"), "\(failure.message)")
    }

    @Test(
        "chat-demo: a server URL that does not parse, is not http(s), has no host or a port outside 1...65535 is a usage error",
        arguments: [
            ("http://127.0.0.1:nope", "not a URL"), ("nope", "the scheme must be http or https"),
            ("ftp://127.0.0.1:8080", "the scheme must be http or https"), ("http://", "the URL has no host"),
            ("http://:8080", "the URL has no host"), ("http://127.0.0.1:70000", "the port must be in 1...65535, not 70000"),
            ("http://127.0.0.1:0", "the port must be in 1...65535, not 0"),
        ])
    func demoBadServer(_ url: String, _ reason: String) throws {
        let failure = try #require(
            Self.failure(ChatDemoCommand.self, ["--server", url, "--user", "alice", "--token", "t", "--db", "/tmp/a.sqlite"]))
        #expect(failure.exitCode == .validationFailure)
        #expect(failure.message.contains("The value '\(url)' is invalid for '--server <url>': \(reason)"), "\(failure.message)")
    }

    @Test("chat-demo: --help describes every option and shows an example")
    func demoHelp() {
        let help = ChatDemoCommand.helpMessage(columns: 200)
        for option in ["--server <url>", "--user <name>", "--token <token>", "--db <path>", "--channel <url>"] {
            #expect(help.contains(option), "\(option)")
        }
        #expect(help.contains("Example, against the server of chat-server's --help example:\n  swift run --package-path Samples chat-demo"))
    }

    // MARK: - The binaries

    /// An executable built next to this test binary (the test target depends on it), as
    /// `CrashKillTests` finds crash-sender.
    static func executable(_ name: String) -> URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [besideTests, besideTests.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/\(name)")
    }

    /// Runs a program to its end and answers its exit status and standard error. The
    /// programs run here end by themselves; should one hang, the test's time limit cancels
    /// the wait, which terminates it.
    static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, standardError: String) {
        let process = Process()
        process.executableURL = executable(name)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        // Read while it runs, so that a full pipe never blocks it.
        let reader = Task.detached { errors.fileHandleForReading.readDataToEndOfFile() }
        let status = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
                process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
                do {
                    try process.run()
                } catch {
                    process.terminationHandler = nil
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            if process.isRunning { process.terminate() }
        }
        return (status, String(decoding: await reader.value, as: UTF8.self))
    }

    @Test("chat-server --port 70000 exits 64 and says why on standard error")
    func serverBinaryUsageError() async throws {
        let result = try await Self.run("chat-server", ["--port", "70000"])
        #expect(result.status == 64)
        #expect(
            result.standardError.hasPrefix("Error: The value '70000' is invalid for '--port <port>': a port is a number in 1...65535\n"))
    }

    @Test("chat-demo --server URL without --token exits 64 and says what is missing on standard error")
    func demoBinaryUsageError() async throws {
        let result = try await Self.run("chat-demo", ["--server", Self.server, "--user", "alice"])
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("Error: missing --token, --db: "))
    }

    @Test("chat-server on a port already taken exits 1 with one line on standard error", .timeLimit(.minutes(1)))
    func serverBinaryRuntimeError() async throws {
        // The port is held by a server in this process, which listens before the program starts.
        let holder = try await ChatServer(databasePath: nil).start()
        let result: (status: Int32, standardError: String)
        do {
            result = try await Self.run("chat-server", ["--port", String(holder.port)])
        } catch {
            await holder.stop()
            throw error
        }
        await holder.stop()
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.last?.hasPrefix("Error: ") == true, "\(result.standardError)")
        #expect(lines.filter { $0.hasPrefix("Error: ") }.count == 1, "\(result.standardError)")
    }
}
