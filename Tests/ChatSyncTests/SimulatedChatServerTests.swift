import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

@Suite("SimulatedChatServer", .capturingLogs)
struct SimulatedChatServerTests {
    private func server(seed: UInt64 = 0, messages: Int = 0) async throws -> SimulatedChatServer {
        let server = SimulatedChatServer(seed: seed)
        try await server.createChannel("general", members: ["alice", "bob"], name: "General")
        for index in 0..<messages { try await server.post(.text("m\(index)"), from: "bob", to: "general") }
        return server
    }

    @Test func sendIsIdempotentByReqId() async throws {
        let server = try await server()
        let alice = server.service(for: "alice")
        let request = SendMessageRequest(reqId: "req-1", channelURL: "general", kind: .text, text: "hello")
        let first = try await alice.sendMessage(request)
        let second = try await alice.sendMessage(request)
        #expect(first.messageId == second.messageId)
        #expect(first == second)
        #expect(first.reqId == "req-1" && first.senderId == "alice" && first.syncState == .synced)
        #expect(await server.messages(in: "general").count == 1)
        let other = try await alice.sendMessage(SendMessageRequest(reqId: "req-2", channelURL: "general", kind: .text, text: "again"))
        #expect(other.messageId != first.messageId)
        #expect(await server.messages(in: "general").map(\.reqId) == ["req-1", "req-2"])
    }

    @Test func aHeldReadAnswerIsAsOldAsTheMomentTheServerMadeIt() async throws {
        let server = try await server(messages: 3)
        let alice = server.service(for: "alice")
        await server.holdReadAnswers()
        let query = MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 10, nextLimit: 0)
        let page = Task { try await alice.fetchMessages(query) }
        #expect(await eventually { await server.heldReadAnswerCount == 1 })
        let newest = try #require(await server.messages(in: "general").last)
        try await server.delete(messageId: newest.messageId, channelURL: "general")
        // Writes are not held: only answers of reads wait.
        _ = try await alice.sendMessage(SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "mine"))
        await server.releaseReadAnswers()
        #expect(try await page.value.messages.map(\.text) == ["m0", "m1", "m2"], "made before the deletion")
        #expect(try await alice.fetchMessages(query).messages.map(\.text) == ["m0", "m1", "mine"])
    }

    @Test func aLostResponseIsAppliedAndTheRetryAnswersTheStoredMessage() async throws {
        let server = try await server()
        await server.setFaults(FaultPlan(loseResponseRate: 1))
        let alice = server.service(for: "alice")
        let request = SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "once")
        let lost = await serviceError { _ = try await alice.sendMessage(request) }
        #expect(lost?.isTransient == true)
        #expect(await server.messages(in: "general").count == 1, "the send was applied")
        await server.setFaults(FaultPlan())
        let retried = try await alice.sendMessage(request)
        #expect(await server.messages(in: "general") == [retried])
    }

    @Test func exactlyTheFirstLookUpAnswersAskedToBeLostAreLost() async throws {
        let server = try await server()
        let alice = server.service(for: "alice")
        let sent = try await alice.sendMessage(SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "x"))
        await server.setFaults(FaultPlan(lostLookUpAnswers: 2))
        // A send is not a look-up: it spends none of them.
        _ = try await alice.sendMessage(SendMessageRequest(reqId: "s", channelURL: "general", kind: .text, text: "y"))
        for _ in 0..<2 {
            let lost = await serviceError { _ = try await alice.lookUpMessages(channelURL: "general", reqIds: ["r"]) }
            #expect(lost?.isTransient == true)
        }
        #expect(try await alice.lookUpMessages(channelURL: "general", reqIds: ["r"]) == [sent])
        #expect(await server.faults.lostLookUpAnswers == 0)
    }

    @Test func aFailedRequestIsNotApplied() async throws {
        let server = try await server()
        await server.setFaults(FaultPlan(failRequestRate: 1))
        let error = await serviceError {
            _ = try await server.service(for: "alice").sendMessage(
                SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "x"))
        }
        #expect(error?.isTransient == true)
        #expect(await server.messages(in: "general").isEmpty)
    }

    @Test func nonMembersAndUnknownChannelsGetPermanentErrors() async throws {
        let server = try await server(messages: 3)
        let mallory = server.service(for: "mallory")
        let forbidden = await serviceError {
            _ = try await mallory.fetchMessages(MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 10, nextLimit: 0))
        }
        #expect(forbidden?.code == .forbidden && forbidden?.isTransient == false)
        let send = await serviceError {
            _ = try await mallory.sendMessage(SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "x"))
        }
        #expect(send?.code == .forbidden)
        #expect(await server.messages(in: "general").count == 3)
        let missing = await serviceError {
            _ = try await server.service(for: "alice").fetchMessages(
                MessageQuery(channelURL: "nope", timestamp: .max, prevLimit: 1, nextLimit: 0))
        }
        #expect(missing?.code == .notFound && missing?.isTransient == false)
        await #expect(throws: ChatServiceError.self) { try await server.post(.text("x"), from: "mallory", to: "general") }
    }

    @Test func fetchHonoursLimitsAndReportsMoreOnEachSide() async throws {
        let server = try await server(messages: 10)
        let all = await server.messages(in: "general")
        let alice = server.service(for: "alice")
        let newest = try await alice.fetchMessages(MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 4, nextLimit: 0))
        #expect(newest.messages == Array(all.suffix(4)))
        #expect(newest.hasPrev && !newest.hasNext)

        let middle = all[5]
        let around = try await alice.fetchMessages(
            MessageQuery(
                channelURL: "general", timestamp: middle.createdAt,
                anchorMessageId: middle.messageId, prevLimit: 2, nextLimit: 3))
        #expect(around.messages == Array(all[4...8]), "inclusive: the anchor is on the previous side, once")
        #expect(around.hasPrev && around.hasNext)

        let exclusive = try await alice.fetchMessages(
            MessageQuery(
                channelURL: "general", timestamp: middle.createdAt,
                anchorMessageId: middle.messageId, prevLimit: 5, nextLimit: 4, inclusive: false))
        #expect(exclusive.messages == Array(all[0...4]) + Array(all[6...9]))
        #expect(!exclusive.hasPrev && !exclusive.hasNext, "exactly everything on both sides")

        let oldest = try await alice.fetchMessages(MessageQuery(channelURL: "general", timestamp: .min, prevLimit: 0, nextLimit: 3))
        #expect(oldest.messages == Array(all.prefix(3)) && oldest.hasNext && !oldest.hasPrev)
        let empty = try await alice.fetchMessages(MessageQuery(channelURL: "general", timestamp: .min, prevLimit: 5, nextLimit: 0))
        #expect(empty.messages.isEmpty && !empty.hasPrev)
    }

    @Test func fetchOrdersTiesByIdAndCanAnchorOnAWholeMillisecond() async throws {
        let server = try await server()
        for text in ["a", "b", "c"] { try await server.post(.text(text), from: "bob", to: "general", at: 5_000) }
        try await server.post(.text("d"), from: "bob", to: "general", at: 4_000)
        let alice = server.service(for: "alice")
        let page = try await alice.fetchMessages(MessageQuery(channelURL: "general", timestamp: 5_000, prevLimit: 10, nextLimit: 10))
        #expect(page.messages.map(\.text) == ["d", "a", "b", "c"], "each message once, ties by id")
        let before = try await alice.fetchMessages(
            MessageQuery(channelURL: "general", timestamp: 5_000, prevLimit: 10, nextLimit: 0, inclusive: false))
        #expect(before.messages.map(\.text) == ["d"])
        #expect(await server.now >= 5_000, "the server clock never goes backwards")
    }

    @Test func fetchAppliesTheFilterOnTheServer() async throws {
        let server = try await server()
        try await server.post(.text("t1"), from: "bob", to: "general")
        try await server.post(.custom(customType: "poll", data: "{}"), from: "alice", to: "general")
        try await server.post(.text("t2"), from: "alice", to: "general")
        let page = try await server.service(for: "alice").fetchMessages(
            MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 1, nextLimit: 0, filter: MessageFilter(senderIds: ["alice"])))
        #expect(page.messages.map(\.text) == ["t2"] && page.hasPrev)
    }

    @Test func changeLogsReportUpdatesAndDeletionsSinceAToken() async throws {
        let server = try await server(messages: 5)
        let alice = server.service(for: "alice")
        let start = try await alice.messageChangeLogs(channelURL: "general", token: nil, limit: 10)
        #expect(start.updated.isEmpty && start.deletedMessageIds.isEmpty && !start.hasMore)
        let ids = await server.messages(in: "general").map(\.messageId)
        try await server.update(messageId: ids[0], channelURL: "general", text: "edited")
        try await server.update(messageId: ids[1], channelURL: "general", text: "edited once")
        try await server.update(messageId: ids[1], channelURL: "general", text: "edited twice")
        try await server.delete(messageId: ids[2], channelURL: "general")
        try await server.post(.text("new"), from: "bob", to: "general")  // new messages are not change logs

        let page1 = try await alice.messageChangeLogs(channelURL: "general", token: start.token, limit: 2)
        #expect(page1.updated.map(\.messageId) == [ids[0], ids[1]])
        #expect(page1.updated.last?.text == "edited twice", "the newest version")
        #expect(page1.hasMore)
        let page2 = try await alice.messageChangeLogs(channelURL: "general", token: page1.token, limit: 2)
        #expect(page2.updated.isEmpty && page2.deletedMessageIds == [ids[2]] && !page2.hasMore)
        let none = try await alice.messageChangeLogs(channelURL: "general", token: page2.token, limit: 2)
        #expect(none.updated.isEmpty && none.deletedMessageIds.isEmpty && none.token == page2.token)
        let bad = await serviceError { _ = try await alice.messageChangeLogs(channelURL: "general", token: "garbage", limit: 2) }
        #expect(bad?.isTransient == false)
    }

    @Test func lookUpFindsSentMessagesByReqId() async throws {
        let server = try await server()
        let alice = server.service(for: "alice")
        let sent = try await alice.sendMessage(SendMessageRequest(reqId: "r1", channelURL: "general", kind: .text, text: "x"))
        let found = try await alice.lookUpMessages(channelURL: "general", reqIds: ["r1", "missing"])
        #expect(found == [sent])
        try await alice.deleteMessage(channelURL: "general", messageId: sent.messageId, operationId: "d1")
        #expect(try await alice.lookUpMessages(channelURL: "general", reqIds: ["r1"]).isEmpty)
    }

    @Test func usersEditAndDeleteOnlyTheirOwnMessages() async throws {
        let server = try await server()
        let bobs = try await server.post(.text("bob's"), from: "bob", to: "general")
        let alice = server.service(for: "alice")
        let edit = await serviceError {
            _ = try await alice.updateMessage(channelURL: "general", messageId: bobs.messageId, text: "x", operationId: "e1")
        }
        #expect(edit?.code == .forbidden)
        let remove = await serviceError {
            try await alice.deleteMessage(channelURL: "general", messageId: bobs.messageId, operationId: "d2")
        }
        #expect(remove?.code == .forbidden)
        let mine = try await alice.sendMessage(SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "mine"))
        let edited = try await alice.updateMessage(channelURL: "general", messageId: mine.messageId, text: "mine!", operationId: "e2")
        #expect(edited.text == "mine!" && edited.updatedAt > mine.updatedAt)
        try await alice.deleteMessage(channelURL: "general", messageId: mine.messageId, operationId: "d3")
        #expect(await server.messages(in: "general") == [bobs])
    }

    @Test func frozenChannelsAndInjectedRefusalsFailPermanently() async throws {
        let server = try await server()
        let alice = server.service(for: "alice")
        try await server.setFrozen(true, channelURL: "general")
        #expect(
            await serviceError {
                _ = try await alice.sendMessage(SendMessageRequest(reqId: "a", channelURL: "general", kind: .text, text: "x"))
            }?.code == .frozen)
        try await server.setFrozen(false, channelURL: "general")
        await server.setFaults(FaultPlan(permanentErrorReqIds: ["b"], permanentErrorTexts: ["bad words"]))
        #expect(
            await serviceError {
                _ = try await alice.sendMessage(SendMessageRequest(reqId: "b", channelURL: "general", kind: .text, text: "x"))
            }?.isTransient == false)
        #expect(
            await serviceError {
                _ = try await alice.sendMessage(SendMessageRequest(reqId: "c", channelURL: "general", kind: .text, text: "bad words"))
            }?.isTransient == false)
        let long = String(repeating: "y", count: SimulatedChatServer.maxTextLength + 1)
        #expect(
            await serviceError {
                _ = try await alice.sendMessage(SendMessageRequest(reqId: "d", channelURL: "general", kind: .text, text: long))
            }?.code == .tooLarge)
        #expect(await server.messages(in: "general").isEmpty)
    }

    @Test func uploadsReportProgressAndAnswerAURL() async throws {
        let server = try await server()
        let steps = Steps()
        let info = try await server.service(for: "alice").uploadFile(
            UploadRequest(reqId: "r", channelURL: "general", localPath: "/tmp/x.png", name: "x.png", mimeType: "image/png", size: 10),
            progress: { fraction in steps.append(fraction) })
        #expect(info.url != nil && info.name == "x.png" && info.localPath == nil)
        #expect(steps.values.count == 10 && steps.values.last == 1 && steps.values == steps.values.sorted())
    }

    /// Ids that Swift's `==` takes for one (a precomposed ë, and an e with a combining
    /// diaeresis) are two users to the server, as to any service: each has its own
    /// membership, messages, connection and events.
    @Test func usersWhoseIdsSpellAlikeAreTwoUsers() async throws {
        let (composed, decomposed) = ("zo\u{EB}", "zoe\u{308}")
        let server = try await server()
        try await server.addMember(composed, to: "general")
        let outsider = await serviceError {
            _ = try await server.service(for: decomposed).fetchMessages(
                MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 1, nextLimit: 0))
        }
        #expect(outsider?.code == .forbidden, "not a member because the other zoë is")
        try await server.addMember(decomposed, to: "general")
        #expect(await server.channel("general")?.memberIds.count == 4)

        var composedEvents = await server.service(for: composed).events().makeAsyncIterator()
        var decomposedEvents = await server.service(for: decomposed).events().makeAsyncIterator()
        #expect(await composedEvents.next() == .connectionChanged(.online))
        #expect(await decomposedEvents.next() == .connectionChanged(.online))
        await server.setOnline(false, for: decomposed)
        #expect(await decomposedEvents.next() == .connectionChanged(.offline))
        #expect(await server.isOnline(composed), "the other zoë stays online")

        let theirs = try await server.post(.text("from the other zoë"), from: decomposed, to: "general")
        #expect(await composedEvents.next() == .messageReceived(theirs))
        let composedService = server.service(for: composed)
        let edit = await serviceError {
            _ = try await composedService.updateMessage(channelURL: "general", messageId: theirs.messageId, text: "x", operationId: "e1")
        }
        #expect(edit?.code == .forbidden)
        let remove = await serviceError {
            try await composedService.deleteMessage(channelURL: "general", messageId: theirs.messageId, operationId: "d1")
        }
        #expect(remove?.code == .forbidden)
        #expect(await server.messages(in: "general") == [theirs])

        await server.setOnline(true, for: decomposed)
        #expect(await decomposedEvents.next() == .connectionChanged(.online))
        // Holding one zoë's events, or losing one on its way to the other, leaves the
        // other's alone.
        await server.holdEvents(for: composed)
        await server.loseNextMessageEvent(from: "bob", in: "general", to: decomposed)
        let held = try await server.post(.text("held for one, lost for the other"), from: "bob", to: "general")
        let next = try await server.post(.text("next"), from: "bob", to: "general")
        #expect(await decomposedEvents.next() == .messageReceived(next), "only the lost one is lost")
        await server.releaseEvents(for: composed)
        #expect(await composedEvents.next() == .messageReceived(held))
        #expect(await composedEvents.next() == .messageReceived(next))
        try await server.removeMember(decomposed, from: "general")
        #expect(await decomposedEvents.next() == .channelRemoved(channelURL: "general"))
        guard case .channelChanged(let channel)? = await composedEvents.next() else {
            Issue.record("the zoë who stays was not told of the change")
            return
        }
        #expect(channel.memberIds.map { Array($0.utf8) } == ["alice", "bob", composed].map { Array($0.utf8) })
        // Each counts its own: online, the other's message, held, next, the change; and
        // online, offline, online, next, the removal.
        #expect(await server.deliveredEventCount(for: composed) == 5)
        #expect(await server.deliveredEventCount(for: decomposed) == 5)
    }

    @Test func offlineUsersFailTransientlyAndSeeTheDisconnection() async throws {
        let server = try await server()
        let alice = server.service(for: "alice")
        var events = await alice.events().makeAsyncIterator()
        #expect(await events.next() == .connectionChanged(.online))
        await server.setOnline(false, for: "alice")
        #expect(await events.next() == .connectionChanged(.offline))
        let error = await serviceError {
            _ = try await alice.fetchMessages(MessageQuery(channelURL: "general", timestamp: .max, prevLimit: 1, nextLimit: 0))
        }
        #expect(error?.code == .network && error?.isTransient == true)
        try await server.post(.text("missed"), from: "bob", to: "general")  // not delivered while offline
        await server.setOnline(true, for: "alice")
        #expect(await events.next() == .connectionChanged(.online))
        let live = try await server.post(.text("live"), from: "bob", to: "general")
        #expect(await events.next() == .messageReceived(live))
        #expect(await server.requestCount == 1, "the refused request still counts")
    }

    @Test func membersReceiveRealTimeEvents() async throws {
        let server = try await server()
        var bob = await server.service(for: "bob").events().makeAsyncIterator()
        _ = await bob.next()
        let sent = try await server.service(for: "alice").sendMessage(
            SendMessageRequest(reqId: "r", channelURL: "general", kind: .text, text: "hi"))
        #expect(await bob.next() == .messageReceived(sent))
        let edited = try await server.update(messageId: sent.messageId, channelURL: "general", text: "hi!")
        #expect(await bob.next() == .messageUpdated(edited))
        try await server.delete(messageId: sent.messageId, channelURL: "general")
        #expect(await bob.next() == .messageDeleted(channelURL: "general", messageId: sent.messageId))
        try await server.removeMember("bob", from: "general")
        #expect(await bob.next() == .channelRemoved(channelURL: "general"))
    }

    @Test func channelPagesFollowEachOrderAndItsCursor() async throws {
        let server = SimulatedChatServer()
        for (url, name, type) in [
            ("c1", "Delta", "team"), ("c2", "Alpha", ""), ("c3", "Charlie", "team"), ("c4", "Bravo", ""), ("c5", "Echo", ""),
        ] {
            try await server.createChannel(url, members: ["alice"], name: name, customType: type)
        }
        try await server.post(.text("x"), from: "alice", to: "c2")
        try await server.post(.text("y"), from: "alice", to: "c4")
        let alice = server.service(for: "alice")
        func all(_ query: ChannelPageQuery) async throws -> [String] {
            var query = query
            var urls: [String] = []
            repeat {
                let page = try await alice.fetchChannels(query)
                #expect(page.channels.count <= query.limit)
                urls += page.channels.map(\.channelURL)
                query.cursor = page.nextCursor
            } while query.cursor != nil
            return urls
        }
        #expect(try await all(ChannelPageQuery(order: .latestLastMessage, limit: 2)) == ["c4", "c2", "c5", "c3", "c1"])
        #expect(try await all(ChannelPageQuery(order: .chronological, limit: 2)) == ["c5", "c4", "c3", "c2", "c1"])
        #expect(try await all(ChannelPageQuery(order: .channelNameAlphabetical, limit: 3)) == ["c2", "c4", "c3", "c1", "c5"])
        #expect(try await all(ChannelPageQuery(includeEmpty: false, limit: 1)) == ["c4", "c2"])
        #expect(try await all(ChannelPageQuery(order: .chronological, customTypes: ["team"])) == ["c3", "c1"])
        #expect(try await server.service(for: "bob").fetchChannels(ChannelPageQuery()).channels.isEmpty)
    }

    @Test func channelChangeLogsReportChangesAndRemovalsPerUser() async throws {
        let server = SimulatedChatServer()
        try await server.createChannel("a", members: ["alice", "bob"])
        try await server.createChannel("b", members: ["alice"])
        try await server.createChannel("z", members: ["bob"])
        let alice = server.service(for: "alice")
        let start = try await alice.channelChangeLogs(token: nil, limit: 10)
        try await server.updateChannel("a", name: "Renamed")
        try await server.deleteChannel("b")
        try await server.updateChannel("z", name: "not alice's")
        try await server.createChannel("c", members: ["alice"])
        try await server.removeMember("alice", from: "c")
        let logs = try await alice.channelChangeLogs(token: start.token, limit: 10)
        #expect(logs.updated.map(\.channelURL) == ["a"] && logs.updated.first?.name == "Renamed")
        #expect(Set(logs.deletedChannelURLs) == ["b", "c"])
        #expect(!logs.hasMore)
        let paged = try await alice.channelChangeLogs(token: start.token, limit: 1)
        #expect(paged.updated.map(\.channelURL) == ["a"] && paged.hasMore)
    }

    /// One scripted session against a server with faults; answers everything it observed.
    private func script(seed: UInt64) async throws -> [String] {
        let server = try await server(seed: seed)
        await server.setFaults(FaultPlan(failRequestRate: 0.3, loseResponseRate: 0.3))
        let alice = server.service(for: "alice")
        var log: [String] = []
        for index in 0..<40 {
            do {
                let message = try await alice.sendMessage(
                    SendMessageRequest(reqId: "r\(index % 25)", channelURL: "general", kind: .text, text: "\(index)"))
                log.append("ok \(message.messageId) \(message.createdAt) \(message.text)")
            } catch {
                log.append("error \(error)")
            }
        }
        log += await server.messages(in: "general").map { "\($0.messageId):\($0.reqId):\($0.createdAt)" }
        return log
    }

    @Test func theSameSeedAndScriptGiveTheSameResults() async throws {
        let first = try await script(seed: 42)
        let second = try await script(seed: 42)
        #expect(first == second)
        #expect(first.contains { $0.hasPrefix("error") } && first.contains { $0.hasPrefix("ok") }, "the plan did inject faults")
        let other = try await script(seed: 43)
        #expect(other != first, "another seed draws other faults")
    }
}

/// Collects progress values reported from another task.
final class Steps: Sendable {
    private let storage = LockedState<[Double]>([])
    func append(_ value: Double) { storage.withLock { $0.append(value) } }
    var values: [Double] { storage.withLock { $0 } }
}
