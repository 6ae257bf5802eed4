import Foundation

// chat-demo: with no arguments, a narrated scenario against an embedded reference server;
// with --server URL --user NAME --token T --db PATH, an interactive line-based client.

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    if arguments.isEmpty {
        try await Scenario().run()
    } else {
        try await InteractiveClient(arguments: arguments).run()
    }
} catch {
    FileHandle.standardError.write(Data("chat-demo: \(error)\n".utf8))
    exit(1)
}
