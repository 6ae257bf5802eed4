import ArgumentParser
import Foundation

/// chat-demo: with no options, a narrated scenario against an embedded reference server;
/// with `--server URL --user NAME --token T --db PATH`, an interactive line-based client.
///
/// Every value is checked while parsing, so a bad one, or an interactive mode with some of
/// its four options missing, is a usage error (exit 64) before anything starts; a failure
/// at run time is printed on one line and exits 1.
@main
struct ChatDemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat-demo",
        abstract: "ChatSync's demo: a narrated scenario, or an interactive chat client for chat-server.",
        // The example's lines stay under 80 columns: --help wraps longer ones mid-command.
        discussion: """
            With no options it starts a reference server on 127.0.0.1 (a random port, a temporary folder) \
            and tells its story, ending with a "Done in" line.

            With --server, --user, --token and --db (all four) it is an interactive client: plain lines send, \
            commands start with "/" (/quit leaves; any other unknown command lists them).

            Example, against the server of chat-server's --help example:
              swift run --package-path Samples chat-demo --server http://127.0.0.1:8080 \\
                --user alice --token alice-token --db /tmp/alice.sqlite
            """)

    /// The interactive mode's options, by their command-line names, in the order they are listed.
    static let interactiveOptions = ["--server", "--user", "--token", "--db"]

    /// The server's base URL: it must parse and have an http or https scheme, a host, and
    /// if it names a port, one in 1...65535. Given back as written, since the client joins
    /// paths to it.
    static func serverURL(_ text: String) throws -> String {
        guard let url = URL(string: text) else {
            throw ValidationError("not a URL; expected http(s)://HOST[:PORT], a port being a number in 1...65535")
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw ValidationError("the scheme must be http or https, as in http://127.0.0.1:8080")
        }
        guard let host = url.host, !host.isEmpty else {
            throw ValidationError("the URL has no host; expected one like http://127.0.0.1:8080")
        }
        if let port = url.port, !(1...65535).contains(port) {
            throw ValidationError("the port must be in 1...65535, not \(port)")
        }
        return text
    }

    /// Refuses an empty value, which the shell passes for an unset variable (`--user "$NAME"`).
    static func nonEmpty(_ what: String) -> @Sendable (String) throws -> String {
        { text in
            guard !text.isEmpty else { throw ValidationError("\(what) cannot be empty") }
            return text
        }
    }

    @Option(
        help: ArgumentHelp("The chat-server to connect to, as http(s)://HOST[:PORT] (interactive mode).", valueName: "url"),
        transform: ChatDemoCommand.serverURL)
    var server: String?

    @Option(
        help: ArgumentHelp("The user to chat as, one the server knows (interactive mode).", valueName: "name"),
        transform: ChatDemoCommand.nonEmpty("a user name"))
    var user: String?

    @Option(
        help: ArgumentHelp("That user's bearer token, as chat-server printed it (interactive mode).", valueName: "token"),
        transform: ChatDemoCommand.nonEmpty("a token"))
    var token: String?

    @Option(
        name: .customLong("db"),
        help: ArgumentHelp(
            "The client's SQLite cache, created if missing; reuse it to find unsent messages again (interactive mode).",
            valueName: "path"),
        transform: ChatDemoCommand.nonEmpty("a database path"))
    var databasePath: String?

    @Option(
        help: ArgumentHelp(
            "The channel to open (interactive mode; default: \(InteractiveClient.defaultChannel)).", valueName: "url"),
        transform: ChatDemoCommand.nonEmpty("a channel URL"))
    var channel: String?

    /// The interactive client the options describe, or `nil` for the narrated scenario.
    /// Only meaningful once `validate()` has passed: all four options or none.
    var interactiveClient: InteractiveClient? {
        guard let server, let user, let token, let databasePath else { return nil }
        return InteractiveClient(
            server: server, user: user, token: token, database: databasePath, channel: channel ?? InteractiveClient.defaultChannel)
    }

    /// All of the interactive options or none: a partial set would otherwise run the
    /// scenario, or a client missing its credentials.
    func validate() throws {
        let given = [server, user, token, databasePath].map { $0 != nil }
        guard given.contains(true) else {
            if channel != nil {
                throw ValidationError("--channel is for interactive mode: add \(Self.interactiveOptions.joined(separator: ", "))")
            }
            return
        }
        let missing = zip(Self.interactiveOptions, given).filter { !$0.1 }.map(\.0)
        guard missing.isEmpty else {
            throw ValidationError(
                "missing \(missing.joined(separator: ", ")): interactive mode needs all of \(Self.interactiveOptions.joined(separator: ", ")) "
                    + "(with none of them, chat-demo runs its narrated scenario)")
        }
    }

    func run() async throws {
        if let client = interactiveClient {
            try await client.run()
        } else {
            try await Scenario().run()
        }
    }
}
