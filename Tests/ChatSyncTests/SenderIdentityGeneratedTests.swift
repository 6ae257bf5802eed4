import ChatSyncTesting
import Logging
import Testing

@testable import ChatSync

/// A user whose id another member's id spells alike: zoë with a precomposed ë is this
/// manager's user, zoë with an e and a combining diaeresis is someone else. Swift's `==`
/// takes the two for one; a service, like the cache's SQL, takes them for two users.
/// Messages of the other zoë must give `.newMessage` (one at a time and in runs); edits
/// and deletions of them, and appends of messages from her, must be refused as not the
/// user's own, on and off line, while the user's own go through to the service; the
/// other zoë may not open zoë's cache file; and the other zoë's own manager, always
/// online, hears of every live message but hers, whatever zoë's connection does.
@Suite("Sender identity, generated", .capturingLogs)
struct SenderIdentityGeneratedTests {
    static let seeds = ScheduleSeeds.senderIdentity

    /// The manager's user.
    static let user = "zo\u{EB}"
    /// Another member, equal to ``user`` by Swift's `==`, not by its bytes.
    static let lookalike = "zoe\u{308}"
    static let senders = [user, lookalike, "carol"]

    private struct View {
        let collection: MessageCollection
        let recorder: EventRecorder
        let filter: MessageFilter
        /// The ids of the messages that must have given `.newMessage`, in order.
        var expected: [Int64] = []
    }

    @Test(arguments: 0..<2)
    func othersMessagesAreTheirsHoweverTheirIdsAreSpelled(batch: Int) async {
        var taken = PathsTaken()
        await Self.seeds.run(batch: batch, of: 2) { seed in try await Self.schedule(seed, &taken) }
        // The paths these schedules try to break are taken: the lookalike's live messages
        // expected alone and in bursts, bursts the engine applied as runs, and changes of
        // the lookalike's messages refused. (A few seeds may miss one; a batch may not.)
        if Self.seeds.batch(batch, of: 2).count >= 20 {
            #expect(taken.alone > 0 && taken.inRuns > 0 && taken.runs > 0 && taken.refused > 0 && taken.intrusions > 0, "\(taken)")
        }
    }

    /// How often the schedules took the paths they are about.
    private struct PathsTaken {
        /// `.newMessage` events of the lookalike's messages posted alone, and in bursts.
        var alone = 0, inRuns = 0
        /// Stretches of messages the engine applied as one run.
        var runs = 0
        /// Edits and deletions of the lookalike's messages, and appends of messages from
        /// her, refused.
        var refused = 0
        /// Opens of zoë's cache by the other zoë while zoë's manager runs, refused (the file is in use).
        var intrusions = 0
    }

    private static func schedule(_ seed: UInt64, _ taken: inout PathsTaken) async throws {
        var random = SeededGenerator(seed: seed)
        let batchSize = Int.random(in: 3...20, using: &random)
        // On a file, so that the other zoë can try to open zoë's cache.
        let directory = try TemporaryDirectory()
        defer { directory.cleanUp() }
        let path = directory.path("cache.sqlite")
        let harness = try await Harness.make(
            seed: seed, userId: user, databasePath: path,
            configure: {
                $0.syncBatchSize = batchSize
                $0.logger = Logger(label: "sender-identity-\(seed)")
            })
        let server = harness.server
        try await server.addMember(lookalike, to: Harness.channel)
        for index in 0..<Int.random(in: 0...30, using: &random) {
            try await server.post(.text("h\(index)"), from: senders.randomElement(using: &random)!, to: Harness.channel)
        }
        await harness.online()
        // The other zoë runs her own manager, always online, with one view: she must hear
        // of every live message but her own, whatever zoë's connection does.
        let other = Harness(
            server: server,
            manager: try await SyncManager(
                userId: lookalike, service: server.service(for: lookalike), databasePath: nil, options: harness.options),
            userId: lookalike, path: nil, options: harness.options)
        await other.online()
        let othersCollection = try await other.manager.messageCollection(channelURL: Harness.channel, limit: 20)
        var othersView = View(collection: othersCollection, recorder: EventRecorder(), filter: MessageFilter())
        await othersCollection.setHandler(othersView.recorder)
        _ = try? await othersCollection.fetchSucceededMessages(.previous)
        var online = true
        var views: [View] = []
        /// The user's own changes, by message id: the text it must end with, `nil` deleted.
        var changes: [Int64: String?] = [:]
        var log = ["batches of \(batchSize)"]
        let context = Self.seeds.describe(seed)
        for step in 0..<24 {
            switch Int.random(in: 0..<14, using: &random) {
            case 0...2:
                // One message at a time: each is handled alone.
                let message = try await server.post(
                    .text("p\(step)"), from: senders.randomElement(using: &random)!, to: Harness.channel)
                if online { taken.alone += expect(message, in: &views) }
                expect(message, in: &othersView, of: lookalike)
                log.append("post from \(spelling(message.senderId))")
            case 3...4:
                // A burst: the engine takes the queued messages as one run.
                var posted: [Message] = []
                try await harness.withEventsQueued {
                    for index in 0..<Int.random(in: 2...8, using: &random) {
                        posted.append(
                            try await server.post(
                                .text("b\(step).\(index)"), from: senders.randomElement(using: &random)!, to: Harness.channel))
                    }
                }
                if online { for message in posted { taken.inRuns += expect(message, in: &views) } }
                for message in posted { expect(message, in: &othersView, of: lookalike) }
                log.append("burst of \(posted.count)")
            case 5...7:
                guard let view = views.randomElement(using: &random),
                    let target = await view.collection.succeededMessages.randomElement(using: &random)
                else { continue }
                let deleting = random.chance(0.4)
                let refused = try await change(target, deleting: deleting, harness, context: "\(context) step \(step): \(log.suffix(8))")
                if refused, target.senderId.utf8.elementsEqual(lookalike.utf8) { taken.refused += 1 }
                if !refused { changes[target.messageId] = .some(deleting ? nil : "edited") }
                log.append("\(deleting ? "delete" : "edit") \(target.messageId) of \(spelling(target.senderId))")
            case 8:
                if let view = views.randomElement(using: &random) {
                    _ = try? await view.collection.fetchSucceededMessages(random.chance(0.5) ? .previous : .next)
                    log.append("fetch")
                }
            case 9:
                online.toggle()
                await server.setOnline(online, for: user)
                log.append(online ? "online" : "offline")
            case 10:
                // The app hands over a message its own SDK sends: the user's own, or unnamed.
                guard let view = views.randomElement(using: &random) else { continue }
                let sender = (senders + [""]).randomElement(using: &random)!
                let own = sender.isEmpty || sender.utf8.elementsEqual(user.utf8)
                let message = Message(
                    reqId: "host-\(step)", channelURL: Harness.channel, senderId: sender, text: "host \(step)", createdAt: 1,
                    syncState: .syncing)
                do {
                    try await view.collection.appendMessage(message)
                    try #require(own, "\(context) step \(step): a message from \(spelling(sender)) was appended as the user's")
                } catch let error as SyncManagerError {
                    try #require(!own && error.code == .invalidParameter, "\(context) step \(step): \(error)")
                    if sender.utf8.elementsEqual(lookalike.utf8) { taken.refused += 1 }
                }
                log.append("append from \(spelling(sender))")
            case 11:
                // The other zoë signs in on this device while zoë's manager runs: the file is
                // in use (and, once zoë's manager closes, not hers: see the end).
                try await Self.requireRefused(lookalike, path: path, server: server, code: .databaseIO, "\(context) step \(step)")
                taken.intrusions += 1
                log.append("the other zoë opens the cache")
            default:
                let filters = [MessageFilter(), MessageFilter(senderIds: [lookalike]), MessageFilter(senderIds: [user])]
                let filter = filters.randomElement(using: &random)!
                let collection = try await harness.manager.messageCollection(
                    channelURL: Harness.channel, filter: filter, limit: Int.random(in: 3...20, using: &random))
                let recorder = EventRecorder()
                await collection.setHandler(recorder)
                _ = try? await collection.fetchSucceededMessages(.previous)
                views.append(View(collection: collection, recorder: recorder, filter: filter))
                if views.count > 3 { await views.removeFirst().collection.remove() }
                log.append("open \(filter.senderIds?.map { spelling($0) } ?? ["all"])")
            }
            await harness.settle()
            await other.settle()
            for view in views + [othersView] {
                try #require(
                    view.recorder.newMessages.map(\.messageId) == view.expected,
                    "\(context) step \(step): .newMessage for exactly the others' live messages, \(log.suffix(8))")
            }
        }
        // Back online and settled: the user's own changes reached the service, and nobody
        // else's messages were changed (only the user edits or deletes here).
        if !online { await server.setOnline(true, for: user) }
        await harness.settle()
        let serverMessages = await server.messages(in: Harness.channel)
        for message in serverMessages where !message.senderId.utf8.elementsEqual(user.utf8) {
            try #require(message.text != "edited", "\(context): \(spelling(message.senderId))'s message \(message.messageId) was edited")
        }
        for (messageId, text) in changes {
            let found = serverMessages.first { $0.messageId == messageId }
            try #require(found?.text == text, "\(context): the user's change of \(messageId) did not reach the service: \(log.suffix(8))")
        }
        let engine = harness.manager.engine
        try #require(try engine.store.operations().isEmpty, "\(context): edits or deletions left in the outbox")
        taken.runs += await engine.liveStretchesApplied
        await harness.manager.close()
        await other.manager.close()
        try await Self.requireRefused(lookalike, path: path, server: server, code: .userMismatch, "\(context) after the close")
    }

    /// A manager of `userId` on zoë's cache file must be refused with `code`.
    private static func requireRefused(
        _ userId: String, path: String, server: SimulatedChatServer, code: SyncManagerError.Code, _ context: String
    ) async throws {
        do {
            let intruder = try await SyncManager(userId: userId, service: server.service(for: userId), databasePath: path)
            await intruder.close()
            try #require(Bool(false), "\(context): \(spelling(userId)) opened zoë's cache")
        } catch let error as SyncManagerError {
            try #require(error.code == code, "\(context): \(error)")
        }
    }

    /// A live message of someone else that a view's filter takes must give it `.newMessage`;
    /// answers how many of the lookalike's were expected.
    private static func expect(_ message: Message, in views: inout [View]) -> Int {
        guard !message.senderId.utf8.elementsEqual(user.utf8) else { return 0 }
        var expected = 0
        for index in views.indices where takes(views[index].filter, message) {
            views[index].expected.append(message.messageId)
            expected += 1
        }
        return message.senderId.utf8.elementsEqual(lookalike.utf8) ? expected : 0
    }

    /// The other zoë's view: every live message but her own gives it `.newMessage`.
    private static func expect(_ message: Message, in view: inout View, of owner: String) {
        if !message.senderId.utf8.elementsEqual(owner.utf8) { view.expected.append(message.messageId) }
    }

    /// Whether a view with `filter` (everything, or some senders) takes `message`: decided
    /// here by bytes, not by the library's own `MessageFilter.matches`.
    private static func takes(_ filter: MessageFilter, _ message: Message) -> Bool {
        guard let senders = filter.senderIds else { return true }
        return senders.contains { $0.utf8.elementsEqual(message.senderId.utf8) }
    }

    /// Edits or deletes `target` through the outbox: accepted for the user's own messages,
    /// `.invalidParameter` for anyone else's. Answers whether it was refused.
    private static func change(_ target: Message, deleting: Bool, _ harness: Harness, context: String) async throws -> Bool {
        let own = target.senderId.utf8.elementsEqual(user.utf8)
        do {
            if deleting {
                try await harness.manager.deleteMessage(messageId: target.messageId, channelURL: Harness.channel)
            } else {
                _ = try await harness.manager.updateMessage(messageId: target.messageId, channelURL: Harness.channel, text: "edited")
            }
            try #require(own, "\(context): \(spelling(target.senderId))'s message was changed by \(spelling(user))")
            return false
        } catch let error as SyncManagerError {
            try #require(!own && error.code == .invalidParameter, "\(context): \(error)")
            return true
        }
    }

    /// A sender named by its scalars, so that logs tell the two zoës apart.
    private static func spelling(_ id: String) -> String {
        id.unicodeScalars.count == id.count ? id : "\(id.unicodeScalars.map(\.value))"
    }
}
