import ChatServer
import Dispatch
import Foundation
import Logging

// chat-server: the reference server as a program.
//
//   swift run --package-path Samples chat-server --db /tmp/chat.sqlite --port 8080 \
//       --user alice:alice-secret --user bob:bob-secret --channel general:alice,bob
//
// Users and channels given here are created (or kept) at start; it prints each user's
// bearer token and serves until SIGINT or SIGTERM.

let usage = """
    usage: chat-server [--db PATH] [--host HOST] [--port PORT] [--user NAME[:TOKEN]]... [--channel URL:MEMBER,MEMBER...]...
    """

var databasePath: String?
var host = "127.0.0.1"
var port = 8080
var users: [(String, String?)] = []
var channels: [(String, [String])] = []
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    func value() -> String {
        guard let next = arguments.next() else {
            FileHandle.standardError.write(Data("\(argument) needs a value\n\(usage)\n".utf8))
            exit(2)
        }
        return next
    }
    switch argument {
    case "--db": databasePath = value()
    case "--host": host = value()
    case "--port":
        guard let number = Int(value()) else { FileHandle.standardError.write(Data("--port needs a number\n".utf8)); exit(2) }
        port = number
    case "--user":
        let parts = value().split(separator: ":", maxSplits: 1).map(String.init)
        users.append((parts[0], parts.count > 1 ? parts[1] : nil))
    case "--channel":
        let parts = value().split(separator: ":", maxSplits: 1).map(String.init)
        channels.append((parts[0], parts.count > 1 ? parts[1].split(separator: ",").map(String.init) : []))
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n\(usage)\n".utf8))
        exit(2)
    }
}

LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
let server = try ChatServer(databasePath: databasePath)
for (name, token) in users {
    let issued = try server.addUser(name, token: token)
    print("user \(name) token \(issued)")
}
for (url, members) in channels where try server.channel(url) == nil {
    try await server.createChannel(url, members: members, name: url)
    print("channel \(url) members \(members.joined(separator: ","))")
}
let running = try await server.start(host: host, port: port)
print("listening on \(running.baseURL)")

// Stop cleanly on SIGINT / SIGTERM.
// The sources live as long as the process; they are never cancelled.
let (stopSignals, signalContinuation) = AsyncStream<Int32>.makeStream()
let signalSources = [SIGINT, SIGTERM].map { number in
    signal(number, SIG_IGN)
    let source = DispatchSource.makeSignalSource(signal: number)
    source.setEventHandler { signalContinuation.yield(number) }
    source.resume()
    return source
}
for await number in stopSignals {
    print("stopping (signal \(number))")
    break
}
await running.stop()
