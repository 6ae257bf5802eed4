import ChatSyncTesting
import Foundation
import Testing

@testable import ChatSync

extension SimulatedChatServer {
    /// The key of the newest message of the test channel.
    var newestKey: MessageKey { messages(in: Harness.channel).last?.sortKey ?? .min }
}

/// The MessageCollection model test's rare paths, the ones a new user walked and found
/// broken (issue 12): views opened in every connection state and never fetched, channels
/// whose cache has no open view through a reconnect, messages dated in the past, and
/// gaps of every size around the threshold. It also holds what they let the test check:
/// which views must follow the newest messages, and which must report a gap.
struct RarePaths {
    /// The gap threshold the model test configures.
    static let threshold = 25
    /// Views at the newest edge (Guarantees: Live updates and reconnect), by collection id: the server's newest message key
    /// when they got there. Every later message that becomes the channel's newest must
    /// reach them (one dated before that key is history, not news).
    var following: [Int: MessageKey] = [:]
    /// Views whose gap report is expected (`true`) or ruled out (`false`) after the last
    /// "away" step, with their gap reports before it.
    private var gapExpected: [Int: (expected: Bool, before: Int)] = [:]
    /// A step counted what the views miss and expects their gap reports at the next check:
    /// other steps must not add to what they miss before it.
    var awaitsGapReports: Bool { !gapExpected.isEmpty }
    /// Loses every other catch-up page of the last "away" step's return, until its check.
    private var armedLosses: EveryOtherRequestLost?

    /// Before the connection breaks. A fresh view (never followed yet) starts following
    /// once the channel is proven live after the reconnect: what arrived before that and
    /// lies beyond the newest page it is shown then is history to it, which
    /// `fetch(.previous)` brings. Its watermark moves to the reconnect.
    mutating func connectionBreaks(_ harness: Harness, _ subjects: [ModelSubject]) async {
        for subject in subjects where following[subject.collection.id] != nil {
            if await harness.manager.engine.isFresh(viewId: subject.collection.id) { following[subject.collection.id] = .max }
        }
    }

    /// The connection is back: views that were fresh at the break follow from here.
    mutating func connectionBack(_ server: SimulatedChatServer) async {
        let newest = await server.newestKey
        for (id, watermark) in following where watermark == .max { following[id] = newest }
    }

    /// Notes what a fetch says about the view's edge.
    mutating func fetched(_ subject: ModelSubject, _ direction: Direction, hasMore: Bool, server: SimulatedChatServer, capacity: Int) async
    {
        let id = subject.collection.id
        switch direction {
        case .next: following[id] = hasMore ? nil : await server.newestKey
        case .previous:
            // A full view drops its newest messages to make room: it is no longer at the edge.
            if await subject.collection.messageCount + subject.collection.limit > capacity { following[id] = nil }
        }
    }

    mutating func walk(
        _ harness: Harness, _ subjects: inout [ModelSubject], online: Bool, running: Bool,
        random: inout SeededGenerator, log: inout [String], losing losses: EveryOtherRequestLost? = nil
    ) async throws {
        let server = harness.server
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            // Away, then back with a gap just below, at or above the threshold.
            guard online, running else { return }
            await harness.settle()  // what the last step posted is not part of the gap
            let count = Int.random(in: (Self.threshold - 2)...(Self.threshold + 3), using: &random)
            gapExpected = [:]
            for subject in subjects where subject.filter.isEmpty {
                guard await harness.manager.engine.isFollowingLive(viewId: subject.collection.id) else { continue }
                gapExpected[subject.collection.id] = (count > Self.threshold, subject.recorder.gapReports)
            }
            log.append("away: \(count) posts while paused\(losses == nil ? "" : ", every other catch-up page lost on return")")
            await connectionBreaks(harness, subjects)
            await harness.manager.pauseSync()
            for index in 0..<count { try await server.post(.text("away \(index)"), from: "bob", to: Harness.channel) }
            await connectionBack(server)
            // A flaky return: each try of the catch-up gets a page and ends short; the gap
            // counts what every try of this connection brought, not what the last one did.
            // Only when a gap is watched: the steps that wait for its check stay out of the way.
            if let losses, awaitsGapReports {
                await losses.startLosing(.newerPages)
                armedLosses = losses
            }
            await harness.manager.resumeSync()
        case 1:
            // A message dated in the past lands inside ranges the cache may hold as complete.
            guard let target = await server.messages(in: Harness.channel).randomElement(using: &random) else { return }
            let at = target.createdAt - Int64.random(in: 0...2, using: &random)
            log.append("post at \(at)")
            // Dated before the newest message, it is history, not news, to views at the edge.
            let newest = await server.newestKey
            for (id, watermark) in following where watermark != .max { following[id] = max(watermark, newest) }
            try await server.post(.text("past"), from: "carol", to: Harness.channel, at: at)
        case 2:
            // Every view closes; the cache lives on through a reconnect (or a pause) while
            // others edit and delete; views open again and are served from the cache.
            log.append("close every view")
            for subject in subjects { await subject.collection.remove() }
            let filters = subjects.map(\.filter)
            subjects.removeAll()
            following.removeAll()
            gapExpected.removeAll()
            if online { await server.setOnline(false, for: "alice") } else if running { await harness.manager.pauseSync() }
            try await Self.othersEditAndDelete(server, text: "away edit", random: &random, log: &log)
            if online { await server.setOnline(true, for: "alice") } else if running { await harness.manager.resumeSync() }
            await harness.settle()
            for filter in filters {
                let subject = try await open(harness, filter: filter, random: &random, log: &log)
                subjects.append(subject)
            }
        default:
            // A view opened in the current connection state, at the newest messages or in
            // history (settled first: see the soak's note on handlers).
            await harness.settle()
            let index = Int.random(in: 0..<subjects.count, using: &random)
            await subjects[index].collection.remove()
            following[subjects[index].collection.id] = nil
            subjects[index] = try await open(harness, filter: subjects[index].filter, random: &random, log: &log)
        }
    }

    /// Others edit (to `text`) or delete one to three of the channel's messages.
    static func othersEditAndDelete(
        _ server: SimulatedChatServer, text: String, random: inout SeededGenerator, log: inout [String]
    ) async throws {
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            guard let target = await server.messages(in: Harness.channel).randomElement(using: &random) else { break }
            if Bool.random(using: &random) {
                log.append("  delete \(target.messageId)")
                try await server.delete(messageId: target.messageId, channelURL: Harness.channel)
            } else {
                log.append("  edit \(target.messageId)")
                try await server.update(messageId: target.messageId, channelURL: Harness.channel, text: text)
            }
        }
    }

    /// Opens a collection at `.max` or in history and fetches it 0 to 2 times.
    private mutating func open(
        _ harness: Harness, filter: MessageFilter, random: inout SeededGenerator, log: inout [String]
    ) async throws -> ModelSubject {
        let all = await harness.server.messages(in: Harness.channel)
        let viewpoint = Bool.random(using: &random) || all.isEmpty ? Int64.max : all.randomElement(using: &random)!.createdAt
        let subject = try await ModelSubject.open(
            harness.manager, filter: filter, viewpoint: viewpoint, limit: Int.random(in: 1...15, using: &random))
        if viewpoint == .max { following[subject.collection.id] = await harness.server.newestKey }
        let fetches = Int.random(in: 0...2, using: &random)
        log.append("open \(filter) at \(viewpoint), \(fetches) fetches")
        for _ in 0..<fetches {
            let hasMore = try await subject.fetchCheckingPageSize(.previous, context: "\(log.suffix(10))")
            await fetched(subject, .previous, hasMore: hasMore, server: harness.server, capacity: 200)
        }
        return subject
    }

    /// Views at the newest edge hold the channel's newest message; gaps are reported
    /// exactly when more than the threshold were missing.
    mutating func check(_ harness: Harness, _ subjects: [ModelSubject], online: Bool, running: Bool, context: String) async throws {
        await armedLosses?.stopLosing()
        armedLosses = nil
        for (id, expectation) in gapExpected {
            guard let subject = subjects.first(where: { $0.collection.id == id }) else { continue }
            let reported = subject.recorder.gapReports > expectation.before
            #expect(
                reported == expectation.expected,
                "a gap is reported exactly when more than \(Self.threshold) are missing (\(expectation.expected)): \(context)")
        }
        gapExpected.removeAll()
        guard online, running else { return }
        let truth = await harness.server.messages(in: Harness.channel)
        for subject in subjects {
            let id = subject.collection.id
            guard let watermark = following[id] else { continue }
            if subject.recorder.gapReports > 0 {
                // Told of a gap: the view stopped following, as Sources/ChatSync/ChatSync.docc/Guarantees.md (Gaps) says; the app would reset it.
                following[id] = nil
                continue
            }
            guard watermark != .max, let newest = truth.last(where: subject.filter.matches), newest.sortKey > watermark
            else { continue }
            let shown = await subject.collection.succeededMessages.last
            let state = await harness.manager.engine.describeView(id)
            #expect(
                shown?.messageId == newest.messageId,
                "a view at the newest edge shows the newest message \(newest.messageId), not \(shown?.messageId ?? -1) (view \(state)): \(context)"
            )
        }
    }
}

extension MessageCollectionModelTests {
    /// The app asks for every newer message at once. Offline (or paused) the cache serves
    /// all it holds beyond the view, so a further `.next` fetch brings nothing; online the
    /// view's edge is what the further fetch says, and the step's checks hold a view at
    /// the newest messages to it. Found: offline, `fetchAllNextMessages()` stopped after
    /// one page while the cache held the rest (an adversarial probe).
    static func fetchEveryNewerMessage(
        _ subject: ModelSubject, _ server: SimulatedChatServer, _ rare: inout RarePaths, online: Bool, log: inout [String],
        context: String
    ) async throws {
        log.append("fetch all next \(subject.filter)")
        // A loop that asks without end shows as a failure, not a hang: the link goes down
        // under it (offline, the fetch ends), and comes back.
        let requestsBefore = await server.requestCount
        let ended = LockedState(false)
        let fetch = Task {
            defer { ended.withLock { $0 = true } }
            try await subject.collection.fetchAllNextMessages()
        }
        _ = await eventually {
            if ended.withLock({ $0 }) { return true }
            return await server.requestCount - requestsBefore > 2_000
        }
        if !ended.withLock({ $0 }) {
            Issue.record("fetchAllNextMessages kept asking: over 2,000 requests: \(context)")
            await server.setOnline(false, for: "alice")
            _ = try? await fetch.value
            await server.setOnline(online, for: "alice")
        }
        try await fetch.value
        let newest = await subject.collection.succeededMessages.last?.messageId
        let hasMore = try await subject.collection.fetchSucceededMessages(.next)
        if !online {
            let after = await subject.collection.succeededMessages.last?.messageId
            #expect(after == newest, "offline, fetchAllNextMessages left cached messages for a later fetch: \(context)")
        }
        await rare.fetched(subject, .next, hasMore: hasMore, server: server, capacity: 200)
    }
}

extension MessageCollectionModelTests {
    /// Offline (or paused), the app opens a view at a place in history, of any filter, and
    /// fetches older messages from the cache. If the fetch says nothing older is left, the
    /// service holds none of the view's messages older than the view's oldest (an empty
    /// view: none at or before its viewpoint). Found: an empty filtered view above a cached
    /// range from the channel's start holding none of its messages was marked as holding
    /// the oldest, for good (an adversarial probe).
    static func viewOpenedOfflineInHistory(
        _ harness: Harness, random: inout SeededGenerator, log: inout [String], context: String
    ) async throws {
        // A message posted into the past (the model's backdated posts) lies inside ranges
        // the cache may hold as complete: nothing on the client can know of it offline
        // (README, Known limitations), so it is left out. It is the one with a larger id
        // than some message after it in time.
        let history = await harness.server.messages(in: Harness.channel)
        var laterLowest = Int64.max
        var backdated: Set<Int64> = []
        for message in history.reversed() {
            if message.messageId > laterLowest { backdated.insert(message.messageId) }
            laterLowest = min(laterLowest, message.messageId)
        }
        let all = history.filter { !backdated.contains($0.messageId) }
        for filter in [MessageFilter(), MessageFilter(senderIds: ["carol"]), MessageFilter(kinds: [.custom])] {
            guard let place = all.randomElement(using: &random) else { return }
            try await openOffline(harness, filter, at: place, all, random: &random, log: &log, context: context)
        }
    }

    private static func openOffline(
        _ harness: Harness, _ filter: MessageFilter, at place: Message, _ all: [Message], random: inout SeededGenerator,
        log: inout [String], context: String
    ) async throws {
        let collection = try await harness.manager.messageCollection(
            channelURL: Harness.channel, filter: filter, viewpoint: place.createdAt, limit: Int.random(in: 1...10, using: &random))
        log.append("offline: a view of \(filter) opened at \(place.createdAt)")
        let hasMore = try await collection.fetchSucceededMessages(.previous)
        if !hasMore {
            let shown = await collection.succeededMessages
            // Messages whose deletion alice queued are hidden from every view already.
            let beingDeleted = Set(
                try harness.manager.engine.store.operations().filter { $0.operation.kind == .deletion }.map(\.operation.messageId))
            let missed = all.filter { message in
                guard filter.matches(message), !beingDeleted.contains(message.messageId) else { return false }
                return shown.first.map { message.sortKey < $0.sortKey } ?? (message.createdAt <= place.createdAt)
            }
            #expect(
                missed.isEmpty,
                "an offline .previous fetch said nothing older is left, but \(missed.count) messages are (\(missed.prefix(3).map(\.messageId))): \(context) \(log.suffix(8))"
            )
        }
        await collection.remove()
    }
}
