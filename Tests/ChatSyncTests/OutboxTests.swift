import ChatSyncTesting
import Clocks
import Foundation
import Testing

@testable import ChatSync

@Suite("Outbox", .capturingLogs)
struct OutboxTests {
    /// A collection at the newest edge (fetched online), recording its events.
    private func collection(_ harness: Harness) async throws -> (MessageCollection, EventRecorder) {
        try await harness.collectionAtTheNewestMessages()
    }

    @Test func aMessageIsStoredBeforeSendReturnsAndGoesCreatedSyncingSynced() async throws {
        let harness = try await Harness.make()
        let (collection, recorder) = try await collection(harness)
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let sent = try await harness.manager.sendMessage(.text("hello"), channelURL: Harness.channel)
        #expect(sent.syncState == .created && !sent.reqId.isEmpty && sent.senderId == "alice")
        #expect(try harness.outbox().map(\.reqId) == [sent.reqId], "in the outbox before sendMessage returned")
        #expect(recorder.events.first == .pending(.insert, [sent]))
        var states = harness.manager.observeMessage(reqId: sent.reqId).makeAsyncIterator()
        #expect(await states.next()?.syncState == .created)
        await harness.server.setOnline(true, for: "alice")
        var seen: [SyncState] = []
        while let message = await states.next() { seen.append(message.syncState) }
        #expect(seen == [.syncing, .synced])
        await harness.settle()
        #expect(try harness.outbox().isEmpty)
        let stored = try #require(await harness.server.messages(in: Harness.channel).first)
        #expect(stored.reqId == sent.reqId && stored.text == "hello")
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await collection.succeededMessages == [stored], "at the newest edge, so it joins the succeeded list")
        #expect(await harness.manager.message(reqId: sent.reqId)?.syncState == .synced)
        await checkInvariants(collection, recorder)
    }

    @Test func lanesAreFIFOAndIndependent() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let harness = try await Harness.make()
        await harness.online()
        await harness.server.holdUploads()
        let file = try makeAttachment(in: dir)
        var names: [String: String] = [:]
        for name in ["T1", "I1", "I2", "T2", "T3", "I3"] {
            let params: MessageParams =
                name.hasPrefix("T")
                ? .text(name) : .file(.image, localPath: file, name: "\(name).png", mimeType: "image/png", caption: name)
            names[try await harness.manager.sendMessage(params, channelURL: Harness.channel).reqId] = name
        }
        // The first upload is stuck; the text lane goes on without it.
        #expect(await eventually { await harness.server.messages(in: Harness.channel).count == 3 })
        #expect(await harness.server.messages(in: Harness.channel).map(\.text) == ["T1", "T2", "T3"])
        #expect(await eventually { await harness.server.heldUploadCount == 1 }, "only the media lane's head is in flight")
        await harness.server.releaseUploads()
        await harness.settle()
        let received = await harness.server.messages(in: Harness.channel).map(\.text)
        #expect(received == ["T1", "T2", "T3", "I1", "I2", "I3"])
        #expect(await harness.server.messages(in: Harness.channel).filter { $0.kind == .image }.allSatisfy { $0.file?.url != nil })
        #expect(try harness.outbox().isEmpty)
    }

    @Test func offlineMessagesWaitWithoutSpendingRetriesThenGoInOrder() async throws {
        let harness = try await Harness.make { $0.sendRetryLimit = 0 }
        await harness.online()
        await harness.server.setOnline(false, for: "alice")
        await harness.settle()
        let requests = await harness.server.requestCount
        var reqIds: [String] = []
        for index in 0..<5 { reqIds.append(try await harness.manager.sendMessage(.text("m\(index)"), channelURL: Harness.channel).reqId) }
        await harness.settle()
        #expect(await harness.server.requestCount == requests, "nothing is tried while offline")
        #expect(try harness.outbox().map(\.message.syncState) == Array(repeating: .created, count: 5))
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == reqIds)
    }

    @Test func aConnectionLostMidSendDoesNotSpendARetry() async throws {
        let harness = try await Harness.make { $0.sendRetryLimit = 0 }
        await harness.online()
        // The device believes it is online, but the service cannot be reached.
        await harness.server.setOnline(false, for: "alice")
        let sent = try await harness.manager.sendMessage(.text("patient"), channelURL: Harness.channel)
        await harness.settle()
        #expect(try harness.outbox().first?.message.syncState == .created, "waiting, not failed, with no retries allowed")
        await harness.server.setOnline(true, for: "alice")
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [sent.reqId])
    }

    @Test func transientErrorsAreRetriedAfterTheIntervalThenSucceed() async throws {
        let clock = TestClock()
        let harness = try await Harness.make {
            $0.clock = clock; $0.sendRetryInterval = .seconds(5)
        }
        await harness.online()
        await harness.server.setFaults(FaultPlan(failRequestRate: 1))
        let sent = try await harness.manager.sendMessage(.text("retry me"), channelURL: Harness.channel)
        #expect(await eventually { (try? harness.outbox().first?.attempts) == 1 })
        #expect(try harness.outbox().first?.message.syncState == .created)
        #expect(await sleeperRegistered(on: clock))
        await clock.advance(by: .seconds(4))
        #expect(try harness.outbox().first?.attempts == 1, "no retry before the interval")
        await harness.server.setFaults(FaultPlan())
        await clock.advance(by: .seconds(1))
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [sent.reqId])
        #expect(try harness.outbox().isEmpty)
    }

    @Test func exhaustedRetriesFailTheMessageAsRetryable() async throws {
        let harness = try await Harness.make { $0.sendRetryLimit = 3 }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(failRequestRate: 1))
        let sent = try await harness.manager.sendMessage(.text("doomed"), channelURL: Harness.channel)
        await harness.settle()
        let failed = try #require(await collection.failedMessages.first)
        #expect(failed.reqId == sent.reqId && failed.syncState == .failed && failed.failure?.isRetryable == true)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await harness.server.sendLog.count == 0, "every attempt was rejected before reaching the send")
        #expect(recorder.events.contains(.failed(.insert, [failed], .none)))
        await checkInvariants(collection, recorder)
    }

    @Test func aPermanentErrorFailsAtOnce() async throws {
        let harness = try await Harness.make { $0.sendRetryLimit = 5 }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["forbidden words"]))
        _ = try await harness.manager.sendMessage(.text("forbidden words"), channelURL: Harness.channel)
        let fine = try await harness.manager.sendMessage(.text("fine"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await harness.server.sendLog.count == 2, "one attempt each")
        #expect(await collection.failedMessages.map(\.failure?.isRetryable) == [false])
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [fine.reqId], "the lane went on")
        await checkInvariants(collection, recorder)
    }

    @Test func policyNoneDropsTheMessage() async throws {
        let harness = try await Harness.make { $0.messageResendPolicy = .none }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["x"]))
        let sent = try await harness.manager.sendMessage(.text("x"), channelURL: Harness.channel)
        await harness.settle()
        #expect(try harness.outbox().isEmpty)
        #expect(await collection.failedMessages.isEmpty)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(recorder.events.contains { if case .pending(.remove, let m) = $0 { m.map(\.reqId) == [sent.reqId] } else { false } })
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
    }

    @Test func policyManualKeepsItUntilResentAndSuccessRemovesItWithItsReason() async throws {
        let harness = try await Harness.make { $0.messageResendPolicy = .manual }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["again"]))
        let sent = try await harness.manager.sendMessage(.text("again"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await collection.failedMessages.map(\.reqId) == [sent.reqId])
        await harness.server.setFaults(FaultPlan())
        recorder.reset()
        let resent = try await harness.manager.resendMessage(reqId: sent.reqId)
        #expect(resent.syncState == .created)
        await harness.settle()
        #expect(await collection.failedMessages.isEmpty)
        #expect(recorder.events.contains { if case .failed(.remove, _, .removeResendSucceeded) = $0 { true } else { false } })
        #expect(
            recorder.events.contains { if case .failed(.update, _, .none) = $0 { true } else { false } },
            "in flight, still in the failed list")
        let stored = await harness.server.messages(in: Harness.channel)
        #expect(stored.map(\.reqId) == [sent.reqId])
        #expect(await collection.succeededMessages == stored)
        await checkInvariants(collection, recorder)
    }

    @Test func aFailedResendSaysSo() async throws {
        let harness = try await Harness.make()
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["no"]))
        let sent = try await harness.manager.sendMessage(.text("no"), channelURL: Harness.channel)
        await harness.settle()
        _ = try await harness.manager.resendMessage(reqId: sent.reqId)
        await harness.settle()
        #expect(recorder.events.last.map { if case .failed(.update, _, .updateResendFailed) = $0 { true } else { false } } == true)
        #expect(await collection.failedMessages.count == 1)
        await checkInvariants(collection, recorder)
    }

    @Test func policyAutomaticResendsWithGrowingDelaysThenGivesUp() async throws {
        let clock = TestClock()
        let harness = try await Harness.make {
            $0.clock = clock
            $0.messageResendPolicy = .automatic
            $0.automaticMessageResendRetryCount = 3
            $0.sendRetryLimit = 0
        }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(failRequestRate: 1))
        _ = try await harness.manager.sendMessage(.text("persistent"), channelURL: Harness.channel)
        #expect(await eventually { await collection.failedMessages.count == 1 })
        var attempts = await harness.server.requestCount
        for delay in [2, 4, 6] {
            #expect(await sleeperRegistered(on: clock), "the resend after \(delay) s is scheduled")
            await clock.advance(by: .seconds(delay - 1))
            #expect(await harness.server.requestCount == attempts, "not before \(delay) s")
            await clock.advance(by: .seconds(1))
            #expect(await eventually { await harness.server.requestCount == attempts + 1 })
            attempts += 1
            #expect(await eventually { await collection.failedMessages.first?.syncState == .failed })
        }
        let giveUps = recorder.events.filter { if case .failed(.update, _, .updateResendFailed) = $0 { true } else { false } }
        #expect(giveUps.count == 1)
        await clock.advance(by: .seconds(60))
        #expect(await harness.server.requestCount == attempts, "the count is spent")
        await checkInvariants(collection, recorder)
    }

    @Test func policyAutomaticRecoversWhenTheServiceDoes() async throws {
        let clock = TestClock()
        let harness = try await Harness.make {
            $0.clock = clock; $0.messageResendPolicy = .automatic; $0.sendRetryLimit = 0
        }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(failRequestRate: 1))
        let sent = try await harness.manager.sendMessage(.text("eventually"), channelURL: Harness.channel)
        #expect(await eventually { await collection.failedMessages.count == 1 })
        await harness.server.setFaults(FaultPlan())
        #expect(await sleeperRegistered(on: clock))
        await clock.advance(by: .seconds(2))
        #expect(await eventually { await collection.failedMessages.isEmpty })
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [sent.reqId])
        #expect(recorder.events.contains { if case .failed(.remove, _, .removeResendSucceeded) = $0 { true } else { false } })
        await checkInvariants(collection, recorder)
    }

    @Test func automaticNeverResendsAPermanentFailure() async throws {
        let harness = try await Harness.make { $0.messageResendPolicy = .automatic }
        let (collection, _) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["bad"]))
        _ = try await harness.manager.sendMessage(.text("bad"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await harness.server.sendLog.count == 1)
        #expect(await collection.failedMessages.count == 1)
    }

    @Test func failedMessagesAreCappedPerChannelAndExpire() async throws {
        let time = ManualTime()
        let harness = try await Harness.make {
            $0.maxFailedMessageCountPerChannel = 2; $0.currentTime = time.source
        }
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["a", "b", "c"]))
        var reqIds: [String] = []
        for text in ["a", "b", "c"] {
            reqIds.append(try await harness.manager.sendMessage(.text(text), channelURL: Harness.channel).reqId)
            await harness.settle()
        }
        #expect(await collection.failedMessages.map(\.reqId) == Array(reqIds.suffix(2)))
        #expect(
            recorder.events.contains {
                if case .failed(.remove, let m, .removeExceededMaxCount) = $0 { m.map(\.reqId) == [reqIds[0]] } else { false }
            })
        time.advance(days: 8)
        await harness.manager.pauseSync()
        await harness.manager.resumeSync()
        await harness.settle()
        #expect(await collection.failedMessages.isEmpty)
        #expect(recorder.events.filter { if case .failed(.remove, _, .removeRetentionExpired) = $0 { true } else { false } }.count == 2)
        #expect(try harness.outbox().isEmpty)
        await checkInvariants(collection, recorder)
    }

    @Test func lostResponsesNeverDuplicateMessages() async throws {
        let harness = try await Harness.make(seed: 99) { $0.sendRetryLimit = 20 }
        await harness.online()
        await harness.server.setFaults(FaultPlan(failRequestRate: 0.1, loseResponseRate: 0.3))
        var reqIds: [String] = []
        for index in 0..<300 {
            reqIds.append(try await harness.manager.sendMessage(.text("m\(index)"), channelURL: Harness.channel).reqId)
        }
        await harness.settle()
        let stored = await harness.server.messages(in: Harness.channel)
        #expect(stored.count == reqIds.count)
        #expect(stored.map(\.reqId) == reqIds, "each exactly once, in lane order")
        let left = try harness.outbox()
        #expect(
            left.isEmpty, "\(left.prefix(3).map { "\($0.message.syncState) attempts \($0.attempts) \($0.message.failure?.message ?? "")" })"
        )
        let lanes = await harness.manager.engine.outbox.runningLanes
        #expect(lanes.isEmpty, "\(lanes)")
    }

    @Test func lostResponsesWithoutEchoesAreRetriedByReqIdWithoutDuplicates() async throws {
        let server = SimulatedChatServer(seed: 7)
        try await server.createChannel(Harness.channel, members: ["alice"])
        let service = ControlledService(server.service(for: "alice"))
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        options.sendRetryLimit = 20
        let manager = try await SyncManager(userId: "alice", service: service, databasePath: nil, options: options)
        await manager.resumeSync()
        await service.holdEvents()  // no echo can resolve a message before its response
        await server.setFaults(FaultPlan(loseResponseRate: 0.4))
        var reqIds: [String] = []
        for index in 0..<200 { reqIds.append(try await manager.sendMessage(.text("m\(index)"), channelURL: Harness.channel).reqId) }
        #expect(await eventually { (try? manager.engine.store.outboxEntries().isEmpty) == true })
        #expect(await server.messages(in: Harness.channel).map(\.reqId) == reqIds)
        #expect(await server.sendLog.count > 200, "lost responses were retried with the same reqId")
        for reqId in reqIds.prefix(5) { #expect(await manager.message(reqId: reqId)?.syncState == .synced) }
        await manager.close()
    }

    /// A manager over a service whose responses or events the test can hold, with a
    /// collection at the newest edge.
    private func controlled() async throws -> (ControlledService, SyncManager, MessageCollection, EventRecorder) {
        let server = SimulatedChatServer()
        try await server.createChannel(Harness.channel, members: ["alice", "bob"])
        let service = ControlledService(server.service(for: "alice"))
        var options = SyncManagerOptions()
        options.clock = InstantClock()
        let manager = try await SyncManager(userId: "alice", service: service, databasePath: nil, options: options)
        await manager.resumeSync()
        let collection = try await manager.messageCollection(channelURL: Harness.channel)
        let recorder = EventRecorder()
        await collection.setHandler(recorder)
        _ = try await collection.fetchSucceededMessages(.previous)
        return (service, manager, collection, recorder)
    }

    @Test func anEchoThatBeatsTheResponseResolvesThePendingMessageOnce() async throws {
        let (service, manager, collection, recorder) = try await controlled()
        await service.holdResponses()
        let sent = try await manager.sendMessage(.text("echo first"), channelURL: Harness.channel)
        #expect(await eventually { await service.heldResponseCount == 1 })
        #expect(await eventually { await collection.succeededMessages.count == 1 })
        #expect(await collection.pendingMessages.isEmpty)
        await service.releaseResponses()
        #expect(await eventually { await manager.engine.isIdle(deliveredEvents: 0) })
        #expect(await collection.succeededMessages.map(\.reqId) == [sent.reqId])
        let pendingRemovals = recorder.events.filter { if case .pending(.remove, _) = $0 { true } else { false } }
        #expect(pendingRemovals.count == 1)
        #expect(recorder.succeededEvents.filter { $0.0 == .insert }.count == 1)
        await checkInvariants(collection, recorder)
        await manager.close()
    }

    @Test func aResponseThatBeatsTheEchoKeepsTheMessagePendingUntilTheEchoPlacesIt() async throws {
        let (service, manager, collection, recorder) = try await controlled()
        await service.holdEvents()
        let sent = try await manager.sendMessage(.text("response first"), channelURL: Harness.channel)
        #expect(await eventually { await manager.message(reqId: sent.reqId)?.syncState == .synced })
        #expect(await collection.pendingMessages.map(\.reqId) == [sent.reqId], "shown until its echo places it")
        #expect(await collection.succeededMessages.isEmpty)
        await service.releaseEvents()
        #expect(await eventually { await collection.succeededMessages.count == 1 })
        #expect(await collection.pendingMessages.isEmpty)
        await checkInvariants(collection, recorder)
        await manager.close()
    }

    @Test func uploadProgressIsReportedInStepsOfAtLeastFivePercent() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let harness = try await Harness.make()
        let (collection, recorder) = try await collection(harness)
        await harness.online()
        let sent = try await harness.manager.sendMessage(
            .file(.image, localPath: try makeAttachment(in: dir), name: "p.png", mimeType: "image/png"), channelURL: Harness.channel)
        await harness.settle()
        let progress = recorder.events.compactMap { event -> Double? in
            if case .pending(.update, let messages) = event, messages.first?.syncState == .uploading {
                messages.first?.uploadProgress
            } else {
                nil
            }
        }
        #expect(progress.first == 0)
        #expect(progress.last == 1)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $1 - $0 >= 0.05 })
        #expect(progress.count >= 3)
        let stored = try #require(await harness.server.messages(in: Harness.channel).first)
        #expect(stored.reqId == sent.reqId && stored.file?.url != nil && stored.file?.name == "p.png" && stored.file?.size == 2_048)
        await checkInvariants(collection, recorder)
    }

    @Test func badInputIsRefusedClearlyAndLeavesTheOutboxAlone() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanUp() }
        let harness = try await Harness.make()
        let keep = try await harness.manager.sendMessage(.text("keep me"), channelURL: Harness.channel)
        let refusals: [(String, MessageParams, String)] = [
            ("empty text", .text(""), Harness.channel),
            ("blank text", .text("  \n "), Harness.channel),
            ("custom without type", .custom(customType: "", data: "{}"), Harness.channel),
            ("empty channel", .text("hi"), ""),
            ("oversized text", .text(String(repeating: "x", count: SendLimits.maxTextLength + 1)), Harness.channel),
            ("oversized data", .custom(customType: "t", data: String(repeating: "d", count: SendLimits.maxDataSize + 1)), Harness.channel),
            ("missing file", .file(.image, localPath: dir.path("nope.png"), name: "nope.png", mimeType: "image/png"), Harness.channel),
            ("a directory", .file(.file, localPath: dir.url.path, name: "dir", mimeType: "application/octet-stream"), Harness.channel),
        ]
        for (name, params, channel) in refusals {
            let code = await errorCode { _ = try await harness.manager.sendMessage(params, channelURL: channel) }
            #expect(code == .invalidParameter, "\(name)")
        }
        try harness.manager.engine.store.upsertChannels([Channel(channelURL: "members-only", memberIds: ["bob"], createdAt: 1)])
        #expect(await errorCode { _ = try await harness.manager.sendMessage(.text("hi"), channelURL: "members-only") } == .invalidParameter)
        #expect(try harness.outbox().map(\.reqId) == [keep.reqId])
    }

    @Test func whatOnlyTheServerKnowsFailsPermanently() async throws {
        let harness = try await Harness.make { $0.sendRetryLimit = 5 }
        await harness.online()
        try await harness.server.createChannel("not-mine", members: ["bob"])
        try await harness.server.createChannel("frozen", members: ["alice"])
        try await harness.server.setFrozen(true, channelURL: "frozen")
        for channel in ["unknown", "not-mine", "frozen"] {
            _ = try await harness.manager.sendMessage(.text("hi"), channelURL: channel)
        }
        let fine = try await harness.manager.sendMessage(.text("fine"), channelURL: Harness.channel)
        await harness.settle()
        let failed = try harness.outbox()
        #expect(failed.count == 3)
        #expect(failed.allSatisfy { $0.message.syncState == .failed && $0.message.failure?.isRetryable == false })
        #expect(Set(failed.compactMap(\.message.failure?.code)) == [404, 403, 423])
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [fine.reqId])
    }

    @Test func cancelAndDeleteRemoveOnlyWhatIsNotInFlight() async throws {
        let harness = try await Harness.make()
        let (collection, recorder) = try await collection(harness)
        let waiting = try await harness.manager.sendMessage(.text("waiting"), channelURL: Harness.channel)
        try await harness.manager.cancelMessage(reqId: waiting.reqId)
        #expect(await collection.pendingMessages.isEmpty)
        #expect(await errorCode { try await harness.manager.cancelMessage(reqId: waiting.reqId) } == .invalidParameter)
        #expect(await errorCode { try await harness.manager.deleteFailedMessage(reqId: "nope") } == .invalidParameter)
        #expect(await errorCode { _ = try await harness.manager.resendMessage(reqId: "nope") } == .invalidParameter)

        await harness.online()
        await harness.server.holdRequests()
        let inFlight = try await harness.manager.sendMessage(.text("in flight"), channelURL: Harness.channel)
        #expect(await eventually { await harness.server.heldRequestCount == 1 })
        #expect(await errorCode { try await harness.manager.cancelMessage(reqId: inFlight.reqId) } == .invalidParameter)
        await harness.server.releaseRequests()
        await harness.settle()

        await harness.server.setFaults(FaultPlan(permanentErrorTexts: ["f1", "f2", "f3"]))
        let other = "elsewhere"
        try await harness.server.createChannel(other, members: ["alice"])
        let f1 = try await harness.manager.sendMessage(.text("f1"), channelURL: Harness.channel)
        _ = try await harness.manager.sendMessage(.text("f2"), channelURL: Harness.channel)
        _ = try await harness.manager.sendMessage(.text("f3"), channelURL: other)
        await harness.settle()
        try await harness.manager.deleteFailedMessage(reqId: f1.reqId)
        #expect(
            recorder.events.contains {
                if case .failed(.remove, let m, .removeManualAction) = $0 { m.first?.reqId == f1.reqId } else { false }
            })
        try await harness.manager.deleteAllFailedMessages(channelURL: Harness.channel)
        #expect(try harness.outbox().map(\.message.text) == ["f3"])
        try await harness.manager.deleteAllFailedMessages()
        #expect(try harness.outbox().isEmpty)
        await checkInvariants(collection, recorder)
    }

    @Test func editingAndDeletingOwnMessagesReachesServerCacheAndViews() async throws {
        let harness = try await Harness.make(history: 3)
        await harness.online()
        let (collection, recorder) = try await collection(harness)
        let sent = try await harness.manager.sendMessage(.text("typo"), channelURL: Harness.channel)
        await harness.settle()
        let stored = try #require(await harness.server.messages(in: Harness.channel).last)
        #expect(stored.reqId == sent.reqId)
        let edited = try await harness.manager.updateMessage(messageId: stored.messageId, channelURL: Harness.channel, text: "fixed")
        #expect(edited.text == "fixed")
        await harness.settle()
        #expect(await collection.succeededMessages.last?.text == "fixed")
        #expect(try harness.manager.engine.store.message(channelURL: Harness.channel, messageId: stored.messageId)?.text == "fixed")
        let bobs = try #require(await harness.server.messages(in: Harness.channel).first)
        #expect(
            await errorCode {
                _ = try await harness.manager.updateMessage(messageId: bobs.messageId, channelURL: Harness.channel, text: "x")
            } == .invalidParameter)
        #expect(
            await errorCode {
                _ = try await harness.manager.updateMessage(messageId: stored.messageId, channelURL: Harness.channel, text: " ")
            } == .invalidParameter)
        try await harness.manager.deleteMessage(messageId: stored.messageId, channelURL: Harness.channel)
        await harness.settle()
        #expect(
            await collection.succeededMessages.map(\.messageId)
                == Array(await harness.server.messages(in: Harness.channel).map(\.messageId)))
        #expect(await harness.server.messages(in: Harness.channel).count == 3)
        await checkInvariants(collection, recorder)
    }

    @Test func aLocalCreationTimeIsNeverEarlierThanTheNewestKnownMessage() async throws {
        let time = ManualTime()
        let harness = try await Harness.make { $0.currentTime = time.source }
        // The device clock is behind: the channel's newest message is "in the future".
        let ahead = try await harness.server.post(.text("from the future"), from: "bob", to: Harness.channel, at: time.now + 60_000)
        let (collection, _) = try await collection(harness)
        #expect(await collection.succeededMessages == [ahead])
        await harness.manager.pauseSync()
        let sent = try await harness.manager.sendMessage(.text("reply"), channelURL: Harness.channel)
        #expect(sent.createdAt >= ahead.createdAt)
        #expect(await collection.pendingMessages.first?.createdAt == sent.createdAt)
    }

    @Test func pausingStopsSendingAndResumingSendsWhatWaited() async throws {
        let harness = try await Harness.make()
        await harness.online()
        await harness.manager.pauseSync()
        let sent = try await harness.manager.sendMessage(.text("later"), channelURL: Harness.channel)
        await harness.settle()
        #expect(await harness.server.sendLog.isEmpty)
        #expect(try harness.outbox().first?.message.syncState == .created)
        await harness.manager.resumeSync()
        await harness.settle()
        #expect(await harness.server.messages(in: Harness.channel).map(\.reqId) == [sent.reqId])
    }

    @Test func callsAfterCloseThrowClosed() async throws {
        let harness = try await Harness.make()
        let sent = try await harness.manager.sendMessage(.text("before"), channelURL: Harness.channel)
        await harness.manager.close()
        #expect(await errorCode { _ = try await harness.manager.sendMessage(.text("after"), channelURL: Harness.channel) } == .closed)
        #expect(await errorCode { _ = try await harness.manager.resendMessage(reqId: sent.reqId) } == .closed)
        #expect(await errorCode { try await harness.manager.cancelMessage(reqId: sent.reqId) } == .closed)
        #expect(await harness.manager.message(reqId: sent.reqId) == nil)
        var finished = harness.manager.observeMessage(reqId: sent.reqId).makeAsyncIterator()
        #expect(await finished.next() == nil)
    }
}
