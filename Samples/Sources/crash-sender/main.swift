// The crash-kill soak's victim: an app that sends a scripted stream of messages from a
// database file and may be killed (SIGKILL) at any moment, then started again on the
// same file. The loopback test `CrashKillTests` drives it.
//
//   crash-sender BASE_URL TOKEN DATABASE CHANNEL COUNT ATTACHMENT
//
// Message i of the script is "m<i>" (every fourth one an image with that caption).
// On start it works out, as a relaunched app's user would, which messages the app
// already accepted: those in its outbox (pending or failed) or on the server. It sends
// the others in order, waits until its outbox is empty, prints "DONE" and exits 0.
// Along the way it edits message i to "m<i>+" for every text message with i % 5 == 1 and deletes
// every text message with i % 5 == 2, through the outbox, deciding again after each
// start from what its view shows (queued edits laid over, queued deletions hidden), and
// waits until the server holds every edit and none of the deleted messages.
// Every failure the library reports is printed as "FAILED <text>", so the test knows
// which messages may have left their lane's order (Guarantees: Failure, retries and resend policy: a resent message joins
// its lane's tail); a message the failed list's limits drop is printed as "DROPPED <text>".
import ChatServerClient
import ChatSync
import Foundation
import Logging

/// Writes one line to standard output at once (unbuffered), so a kill loses no line already written.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Prints every failure the collection reports.
final class FailureReporter: MessageCollectionHandler {
    func collection(
        _ c: MessageCollection, didReceive action: MessageEventAction, failedMessages: [Message],
        reason: FailedMessageEventActionReason
    ) {
        switch (action, reason) {
        case (.insert, _), (.update, _):
            for message in failedMessages { say("FAILED \(message.text)") }
        case (.remove, .removeExceededMaxCount), (.remove, .removeRetentionExpired):
            // The failed list's limits dropped a message: the soak must hear of it.
            for message in failedMessages { say("DROPPED \(message.text) \(reason)") }
        default:
            break
        }
    }

    func collection(_ c: MessageCollection, didFailOperation operation: OutboxOperation, failure: SyncFailure) {
        say("OPERATION FAILED \(operation.kind.rawValue) \(operation.messageId): \(failure.message)")
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let count = Int(arguments[5]) else {
    FileHandle.standardError.write(Data("usage: crash-sender BASE_URL TOKEN DATABASE CHANNEL COUNT ATTACHMENT\n".utf8))
    exit(64)
}
let (baseURL, token, databasePath, channelURL, attachment) = (arguments[1], arguments[2], arguments[3], arguments[4], arguments[6])

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

var options = SyncManagerOptions()
options.messageResendPolicy = .automatic
options.automaticMessageResendRetryCount = 50
options.sendRetryInterval = .milliseconds(50)
options.sendRetryLimit = 20
// The soak proves delivery, not the failed list's cap: under a loaded machine more than
// the default 20 messages can wait for their automatic resend at once, and the cap
// would drop the oldest of them (reported as DROPPED).
options.maxFailedMessageCountPerChannel = 1_000
let service = HTTPChatService(baseURL: baseURL, token: token, timeout: .seconds(5), maxBackoff: .milliseconds(200))
let manager = try await SyncManager(userId: "alice", service: service, databasePath: databasePath, options: options)
await manager.resumeSync()
say("STARTED")

let collection = try await manager.messageCollection(channelURL: channelURL)
let reporter = FailureReporter()
await collection.setHandler(reporter)
try await collection.fetchPendingMessages()
try await collection.fetchFailedMessages()
let failedAtStart = await collection.failedMessages
for message in failedAtStart { say("FAILED \(message.text)") }
let inOutbox = Set(await collection.pendingMessages.map(\.text) + failedAtStart.map(\.text))

/// Every text on the server in the channel, read page by page straight from the service.
func textsOnServer() async throws -> Set<String> {
    var texts: Set<String> = []
    var timestamp = Int64.max
    var anchor: Int64?
    while true {
        let query = MessageQuery(
            channelURL: channelURL, timestamp: timestamp, anchorMessageId: anchor, prevLimit: 100, nextLimit: 0, inclusive: false)
        let page = try await service.fetchMessages(query)
        texts.formUnion(page.messages.map(\.text))
        guard page.hasPrev, let oldest = page.messages.first else { return texts }
        (timestamp, anchor) = (oldest.createdAt, oldest.messageId)
    }
}

var onServer: Set<String>?
while onServer == nil {
    do { onServer = try await textsOnServer() } catch { try await Task.sleep(for: .milliseconds(50)) }
}
// A message deleted on purpose is on neither side any more: the app remembers what its
// user deleted in a journal beside its database, written before each deletion is asked
// for (a kill in between leaves a journaled message on the server, which the last pass
// deletes again). Edited messages are on the server with their new text.
let journalPath = databasePath + ".deleted"
let journaled = Set(((try? String(contentsOfFile: journalPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init))
let serverScript = Set((onServer ?? []).map { $0.hasSuffix("+") ? String($0.dropLast()) : $0 })
let accepted = inOutbox.union(serverScript).union(journaled)

/// Appends a deleted message's text to the journal.
func journal(_ text: String) throws {
    if !FileManager.default.fileExists(atPath: journalPath) { _ = FileManager.default.createFile(atPath: journalPath, contents: nil) }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: journalPath))
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data((text + "\n").utf8))
}

// Edits and deletions. What the view shows already says which were accepted before a
// kill: an accepted edit shows its text, an accepted deletion hides the message. One that
// failed for good shows the message as it was, so it is simply made again. A pass runs
// now and then while sending (so that kills land with them queued among the sends) and
// at the end.
let edited = (0..<count).filter { $0 % 4 != 3 && $0 % 5 == 1 }.map { "m\($0)" }
let deleted = Set((0..<count).filter { $0 % 4 != 3 && $0 % 5 == 2 }.map { "m\($0)" })
while try await collection.fetchSucceededMessages(.previous) {}

func editAndDeletePass() async throws {
    for message in await collection.succeededMessages where message.senderId == "alice" {
        if edited.contains(message.text) {
            _ = try await manager.updateMessage(messageId: message.messageId, channelURL: channelURL, text: message.text + "+")
            say("EDITED \(message.text)")
        } else if deleted.contains(message.text) {
            try journal(message.text)
            try await manager.deleteMessage(messageId: message.messageId, channelURL: channelURL)
            say("DELETED \(message.text)")
        }
    }
}

var sentNow = 0
for index in 0..<count where !accepted.contains("m\(index)") {
    let text = "m\(index)"
    let params: MessageParams =
        index % 4 == 3 ? .file(.image, localPath: attachment, name: "p.png", mimeType: "image/png", caption: text) : .text(text)
    _ = try await manager.sendMessage(params, channelURL: channelURL)
    say("ACCEPTED \(text)")
    sentNow += 1
    if sentNow % 20 == 0 { try await editAndDeletePass() }
}

// Wait until the outbox is empty (every message synced), resending nothing by hand:
// the automatic policy does that.
while true {
    let pending = await collection.pendingMessages
    let failed = await collection.failedMessages
    if pending.isEmpty && failed.isEmpty { break }
    try await Task.sleep(for: .milliseconds(20))
}
while true {
    try await editAndDeletePass()
    if let texts = try? await textsOnServer(), texts.isDisjoint(with: deleted), texts.isSuperset(of: edited.map { $0 + "+" }) {
        break
    }
    try await Task.sleep(for: .milliseconds(20))
}
say("DONE")
await manager.close()
exit(0)
