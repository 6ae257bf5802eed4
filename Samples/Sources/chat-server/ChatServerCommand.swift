import ArgumentParser
import ChatServer
import Dispatch
import Foundation
import Logging

/// chat-server: the reference server as a program. Users and channels given on the
/// command line are created (or kept) at start; it prints each user's bearer token and
/// serves until SIGINT or SIGTERM.
///
/// Every value is checked while parsing, so a bad one is a usage error (exit 64) before
/// anything is opened; a failure at run time (a database that cannot be opened, a port
/// already taken) is printed on one line and exits 1.
@main
struct ChatServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-server",
        abstract: "The ChatSync reference server: HTTP and WebSocket on one port, persisted in SQLite.",
        // The example's lines stay under 80 columns: --help wraps longer ones mid-command.
        discussion: """
            Users and channels given here are created at start, or kept when the database already has them; \
            it prints each user's bearer token and each new channel, then "listening on URL", and serves \
            until SIGINT or SIGTERM. A user named without a token gets a new random one.

            Example:
              swift run --package-path Samples chat-server --db /tmp/chat.sqlite \\
                --port 8080 --user alice:alice-token --user bob:bob-token \\
                --channel general:alice,bob
            """)

    /// A `--user NAME[:TOKEN]` value (Equatable for the command-line tests).
    struct User: Equatable {
        let name: String
        /// `nil` when none was given (or it was empty): the server makes one up.
        let token: String?

        /// Splits at the first colon, so that a token may itself contain colons.
        static func parse(_ text: String) throws -> User {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let name = parts.first, !name.isEmpty else {
                throw ValidationError("a user needs a name, as NAME or NAME:TOKEN")
            }
            let token = parts.count > 1 && !parts[1].isEmpty ? parts[1] : nil
            return User(name: name, token: token)
        }
    }

    /// A `--channel URL:MEMBER,MEMBER...` value (Equatable for the command-line tests).
    struct Channel: Equatable {
        let url: String
        let members: [String]

        /// Splits at the first colon: the URL before it, the comma-separated members after.
        static func parse(_ text: String) throws -> Channel {
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard let url = parts.first, !url.isEmpty else {
                throw ValidationError("a channel needs a URL, as URL:MEMBER,MEMBER...")
            }
            // Empty names between commas ("a,,b", a trailing comma) are dropped, as before.
            let members = parts.count > 1 ? parts[1].split(separator: ",").map(String.init) : []
            guard !members.isEmpty else {
                throw ValidationError("channel '\(url)' needs at least one member, as \(url):MEMBER,MEMBER...")
            }
            return Channel(url: url, members: members)
        }
    }

    /// The port the server listens on when `--port` is not given; the README's examples use it.
    static let defaultPort = 8080

    /// A TCP port: a number in 1...65535. Port 0 (the system picks one) is refused: this
    /// program is for clients started by hand, which must be told the port beforehand.
    static func port(_ text: String) throws -> Int {
        guard let number = Int(text), (1...65535).contains(number) else {
            throw ValidationError("a port is a number in 1...65535")
        }
        return number
    }

    /// An address to bind; only emptiness is checked here, the rest is the system's to judge at start.
    static func host(_ text: String) throws -> String {
        guard !text.isEmpty else { throw ValidationError("a host cannot be empty") }
        return text
    }

    @Option(
        name: .customLong("db"),
        help: ArgumentHelp("The SQLite file that keeps users, channels and messages; in memory when omitted.", valueName: "path"))
    var databasePath: String?

    @Option(help: ArgumentHelp("The address to listen on (default: 127.0.0.1).", valueName: "host"), transform: ChatServerCommand.host)
    var host = "127.0.0.1"

    @Option(
        help: ArgumentHelp("The port to listen on, 1...65535 (default: \(ChatServerCommand.defaultPort)).", valueName: "port"),
        transform: ChatServerCommand.port)
    var port = ChatServerCommand.defaultPort

    @Option(
        name: .customLong("user"),
        help: ArgumentHelp(
            "A user to create, with their bearer token (a new random one when omitted). Repeat for more users.",
            valueName: "name[:token]"),
        transform: User.parse)
    var users: [User] = []

    @Option(
        name: .customLong("channel"),
        help: ArgumentHelp(
            "A channel to create with its members, unless the database has it already. Repeat for more channels.",
            valueName: "url:member,member..."),
        transform: Channel.parse)
    var channels: [Channel] = []

    /// Writes one line to standard output at once, even when it is a pipe or a file (where
    /// `print` keeps it in a buffer until exit), so that a script waiting for "listening
    /// on" sees it as soon as it is true.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let server = try ChatServer(databasePath: databasePath)
        for user in users {
            let issued = try server.addUser(user.name, token: user.token)
            Self.say("user \(user.name) token \(issued)")
        }
        for channel in channels where try server.channel(channel.url) == nil {
            try await server.createChannel(channel.url, members: channel.members, name: channel.url)
            Self.say("channel \(channel.url) members \(channel.members.joined(separator: ","))")
        }
        let running = try await server.start(host: host, port: port)
        Self.say("listening on \(running.baseURL)")

        // Stop cleanly on SIGINT / SIGTERM: the default actions are turned off and the
        // signals arrive through dispatch sources instead.
        let (stopSignals, signalContinuation) = AsyncStream<Int32>.makeStream()
        let signalSources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { signalContinuation.yield(number) }
            source.resume()
            return source
        }
        for await number in stopSignals {
            Self.say("stopping (signal \(number))")
            break
        }
        // The sources must outlive the wait (a released source delivers nothing); they are
        // never cancelled, since the process ends soon after.
        withExtendedLifetime(signalSources) {}
        await running.stop()
    }
}
