import ChatSync
import Foundation

/// A complete, deterministic, in-memory chat backend for tests: of ChatSync, and
/// of apps built on it.
///
/// It keeps channels with members, assigns increasing message ids and creation
/// times from its own clock, answers every `ChatService` request (fetch around a
/// position, change logs, look-up and idempotent send by `reqId`, uploads, edits,
/// channel pages and change logs) and pushes real-time events to each connected
/// member. ``setOnline(_:for:)`` cuts one user off; a ``FaultPlan`` makes requests
/// fail or lose their responses, drawn from the seed, so the same seed and the
/// same calls give the same results.
///
/// ```swift
/// let server = SimulatedChatServer(seed: 7)
/// try await server.createChannel("general", members: ["alice", "bob"])
/// try await server.post(.text("Hi Alice"), from: "bob", to: "general")
/// let manager = try await SyncManager(userId: "alice", service: server.service(for: "alice"),
///                                     databasePath: nil)
/// ```
///
/// Users are told apart by the bytes of their ids, as real services tell them: ids that
/// Swift's `==` takes for one ("zo\u{EB}" and "zoe\u{308}") are two users, each with their
/// own memberships, connection and events, and the right to change only their own messages.
///
/// Errors follow `ChatServiceError`: a non-member gets a permanent `forbidden`,
/// an unknown channel a permanent `notFound`, an offline user a transient `network`.
public actor SimulatedChatServer {
    /// The first value of the server clock (2023-11-14T22:13:20Z), fixed so runs repeat.
    public static let epoch: Int64 = 1_700_000_000_000
    /// The longest text the server accepts; longer sends fail permanently with `tooLarge`.
    public static let maxTextLength = 10_000

    struct ChannelState {
        var channel: Channel
        /// Live messages, ascending by `(createdAt, messageId)`.
        var messages: [Message] = []
        /// `createdAt` of every live message by id, to find it by binary search.
        var createdAtById: [Int64: Int64] = [:]
        /// Every message sent with a request id, deleted ones included, for idempotent sends.
        var sentByReqId: [String: Message] = [:]
        /// Message updates and deletions: (change sequence, message id).
        var changes: [(seq: Int64, messageId: Int64)] = []
    }

    var random: SeededGenerator
    var clock: Int64 = epoch
    var nextMessageId: Int64 = 1
    var changeSeq: Int64 = 0
    /// Message change-log tokens name this era; ``expireMessageChangeLogTokens()`` starts a new one.
    var messageTokenEra = 0
    var channelStates: [String: ChannelState] = [:]
    /// Channel changes: (change sequence, channel, the users it concerns).
    var channelChanges: [(seq: Int64, channelURL: String, users: Set<UserKey>)] = []
    var offlineUsers: Set<UserKey> = []
    var subscribers: [UserKey: [UInt64: AsyncStream<ServiceEvent>.Continuation]] = [:]
    var nextSubscriberId: UInt64 = 0
    /// Events enqueued per subscription, and each user's newest subscription.
    var enqueuedCounts: [UInt64: Int] = [:]
    var newestSubscription: [UserKey: UInt64] = [:]
    var uploadCount = 0
    /// Users whose real-time events wait, in order, until ``releaseEvents(for:)``.
    var heldEvents: [UserKey: [ServiceEvent]] = [:]
    /// Whether real-time copies of a message carry its `reqId`.
    var eventsCarryReqId = true
    /// Message events to lose on their way (``loseNextMessageEvent(from:in:to:)``).
    var echoesToLose: Set<EchoToLose> = []
    var requestGate = Gate()
    var uploadGate = Gate()
    var readAnswerGate = Gate()
    var writeAnswerGate = Gate()
    /// How many answers were ever held at the read and write answer gates together.
    var answerTickets = 0
    /// Every send request's (channel, reqId) in arrival order, repeats included.
    public internal(set) var sendLog: [(channelURL: String, reqId: String)] = []
    /// The `reqId` of every send request refused because its user was offline (thrown as
    /// `ChatServiceError.Code.network`), repeats included. Such a request never reached
    /// the service, but a client cannot tell it from a connection that broke after the
    /// request went, so it must count the message as possibly stored.
    public internal(set) var unreachedSendLog: [String] = []
    /// How many edit and deletion requests arrived with each operation id, repeats
    /// included. Like a send's `reqId`, an operation id is applied once: a repeat
    /// (after a lost response) answers without changing anything again.
    public internal(set) var operationRequests: [String: Int] = [:]
    /// The operation ids that changed something.
    public internal(set) var appliedOperations: Set<String> = []

    /// The faults applied to requests.
    public internal(set) var faults = FaultPlan()
    /// Requests made by every user, whatever their outcome (offline and faulted ones included).
    public internal(set) var requestCount = 0
    /// Look-ups of messages by `reqId` (`messages(channelURL:reqIds:)`, how a relaunch
    /// reconciles what was in flight), counted like ``requestCount``.
    public internal(set) var lookUpCount = 0

    /// Creates an empty server whose faults are drawn from `seed`.
    public init(seed: UInt64 = 0) {
        random = SeededGenerator(seed: seed)
    }

    /// The `ChatService` that acts as `userId`.
    public nonisolated func service(for userId: String) -> any ChatService {
        SimulatedChatService(server: self, userId: userId)
    }

    /// Replaces the fault plan.
    public func setFaults(_ plan: FaultPlan) {
        faults = plan
    }

    // MARK: - Holding requests

    /// Makes every request wait before it reaches the server until
    /// ``releaseRequests()``: a deterministic way to catch a client with a request in flight.
    public func holdRequests() { requestGate.isHolding = true }

    /// Lets held requests (and later ones) through.
    public func releaseRequests() { requestGate.release() }

    /// How many requests are waiting on ``holdRequests()``.
    public var heldRequestCount: Int { requestGate.waiting.count }

    /// Makes uploads wait before they complete until ``releaseUploads()``: a slow
    /// upload, without real time.
    public func holdUploads() { uploadGate.isHolding = true }

    /// Lets held uploads (and later ones) complete.
    public func releaseUploads() { uploadGate.release() }

    /// How many uploads are waiting on ``holdUploads()``.
    public var heldUploadCount: Int { uploadGate.waiting.count }

    func waitWhileHeld() async {
        guard requestGate.isHolding else { return }
        await withCheckedContinuation { requestGate.hold($0) }
    }

    /// Makes the answers of reads (message pages, channel pages and both kinds of change
    /// logs) wait on their way, after the server made them, until
    /// ``releaseReadAnswers()``: a slow link whose answers are older than what happens
    /// meanwhile (others' edits and deletions reach the client first, in real time).
    public func holdReadAnswers() { readAnswerGate.isHolding = true }

    /// Lets held answers (and later ones) arrive.
    public func releaseReadAnswers() { readAnswerGate.release() }

    /// How many answers are waiting on ``holdReadAnswers()``.
    public var heldReadAnswerCount: Int { readAnswerGate.waiting.count }

    /// When each held read answer was held, in the order of ``releaseReadAnswer(at:)``'s
    /// indices: numbers that grow from one counter shared with the write answers'
    /// (``heldWriteAnswerTickets``), so that a test can tell that it let an answer through
    /// ahead of an older one of the other kind (an edit's answer before a page made first).
    public var heldReadAnswerTickets: [Int] { readAnswerGate.waiting.map(\.ticket) }

    /// The next number for a held answer (see ``heldReadAnswerTickets``).
    private func nextAnswerTicket() -> Int {
        answerTickets += 1
        return answerTickets
    }

    func waitWhileReadAnswersHeld() async {
        guard readAnswerGate.isHolding else { return }
        let ticket = nextAnswerTicket()
        await withCheckedContinuation { readAnswerGate.hold($0, ticket: ticket) }
    }

    /// Lets the held read answer at `index` (in the order they were held, below
    /// ``heldReadAnswerCount``) arrive alone, the others still held: answers made in one
    /// order that reach the client in another. Answers whether one was held there.
    @discardableResult
    public func releaseReadAnswer(at index: Int) -> Bool { readAnswerGate.releaseOne(at: index) }

    /// Makes the answers of writes (sends, edits and deletions, their errors too) wait on
    /// their way, after the server applied them (their real-time events go out as usual), until
    /// ``releaseWriteAnswers()`` or ``releaseWriteAnswer(at:)``: a slow link on which the
    /// echo of a message comes before the answer to its send, and answers of several
    /// lanes and channels may be let through in any order.
    public func holdWriteAnswers() { writeAnswerGate.isHolding = true }

    /// Lets held write answers (and later ones) arrive.
    public func releaseWriteAnswers() { writeAnswerGate.release() }

    /// Lets the held write answer at `index` (in the order they were held, below
    /// ``heldWriteAnswerCount``) arrive alone, the others still held. Answers whether one
    /// was held there.
    @discardableResult
    public func releaseWriteAnswer(at index: Int) -> Bool { writeAnswerGate.releaseOne(at: index) }

    /// How many answers are waiting on ``holdWriteAnswers()``.
    public var heldWriteAnswerCount: Int { writeAnswerGate.waiting.count }

    /// When each held write answer was held, in the order of ``releaseWriteAnswer(at:)``'s
    /// indices, numbered from the counter of ``heldReadAnswerTickets``.
    public var heldWriteAnswerTickets: [Int] { writeAnswerGate.waiting.map(\.ticket) }

    /// Runs a write and holds its outcome (its answer, or the error it ends in) while
    /// ``holdWriteAnswers()`` holds answers. The write and the hold happen in one turn of
    /// the server, so held answers queue in the order the server made them, and a write
    /// nobody holds costs no extra trip to it.
    func answeringLate<Answer: Sendable>(_ write: @Sendable (isolated SimulatedChatServer) throws -> Answer) async throws -> Answer {
        let outcome = Result { try write(self) }
        if writeAnswerGate.isHolding {
            let ticket = nextAnswerTicket()
            await withCheckedContinuation { writeAnswerGate.hold($0, ticket: ticket) }
        }
        return try outcome.get()
    }

    func waitWhileUploadsHeld() async {
        guard uploadGate.isHolding else { return }
        await withCheckedContinuation { uploadGate.hold($0) }
    }

    // MARK: - Clock

    /// The server clock, in milliseconds since 1970. It never goes backwards.
    public var now: Int64 { clock }

    /// Moves the server clock forward, as if time passed.
    public func advanceClock(by milliseconds: Int64) {
        clock += max(0, milliseconds)
    }

    /// The next creation time: one millisecond after the last.
    func tick() -> Int64 {
        clock += 1
        return clock
    }

    // MARK: - Messages (as other clients)

    /// Stores a message as if another client of `userId` sent it, and delivers it in
    /// real time to the connected members.
    ///
    /// - Parameters:
    ///   - params: what the message carries.
    ///   - userId: the sender, a member of the channel.
    ///   - channelURL: the channel to post to.
    ///   - createdAt: the creation time; `nil` uses the server clock. A time
    ///     in the past places the message in history (and in the change logs, so that a
    ///     client away meanwhile learns of it); the clock never goes backwards.
    @discardableResult
    public func post(_ params: MessageParams, from userId: String, to channelURL: String, at createdAt: Int64? = nil) throws -> Message {
        let state = try channelState(channelURL)
        guard state.channel.hasMember(userId) else {
            throw ChatServiceError.permanent(.forbidden, "\(userId) is not a member of \(channelURL)")
        }
        var file: FileInfo?
        if params.kind.hasAttachment {
            uploadCount += 1
            file = FileInfo(
                name: params.fileName ?? "file", mimeType: params.mimeType ?? "application/octet-stream",
                size: 0, url: fileURL(uploadCount, params.fileName ?? "file"))
        }
        let time: Int64
        let intoHistory: Bool
        if let createdAt {
            time = createdAt
            intoHistory = createdAt < clock
            clock = max(clock, createdAt)
        } else {
            time = tick()
            intoHistory = false
        }
        let stored = try store(
            Message(
                messageId: nextMessageId, channelURL: channelURL, senderId: userId, kind: params.kind, text: params.text,
                customType: params.customType, data: params.data, file: file, parentMessageId: params.parentMessageId,
                createdAt: time))
        if intoHistory {
            changeSeq += 1
            channelStates[channelURL]?.changes.append((changeSeq, stored.messageId))
        }
        return stored
    }

    /// Edits any message, as an administrator would, and tells the members.
    @discardableResult
    public func update(messageId: Int64, channelURL: String, text: String) throws -> Message {
        try applyUpdate(channelURL: channelURL, messageId: messageId, text: text, by: nil)
    }

    /// Deletes any message, as an administrator would, and tells the members.
    public func delete(messageId: Int64, channelURL: String) throws {
        try applyDelete(channelURL: channelURL, messageId: messageId, by: nil)
    }

    /// The live messages of a channel, ascending: the server's truth.
    public func messages(in channelURL: String) -> [Message] {
        channelStates[channelURL]?.messages ?? []
    }

    /// Whether a send with `reqId` was ever stored in the channel, deleted since or not.
    public func everStored(reqId: String, in channelURL: String) -> Bool {
        channelStates[channelURL]?.sentByReqId[reqId] != nil
    }

    /// Stores a new message (its id is taken from `nextMessageId`) and announces it.
    func store(_ draft: Message) throws -> Message {
        var message = draft
        message.messageId = nextMessageId
        message.syncState = .synced
        nextMessageId += 1
        var state = try takeChannelState(message.channelURL)
        let index = state.messages.partitionPoint { $0.sortKey <= message.sortKey }
        state.messages.insert(message, at: index)
        state.createdAtById[message.messageId] = message.createdAt
        if !message.reqId.isEmpty { state.sentByReqId[message.reqId] = message }
        if message.createdAt >= (state.channel.lastMessage?.createdAt ?? .min) { state.channel.lastMessage = message }
        channelStates[message.channelURL] = state
        recordChannelChange(message.channelURL, users: state.channel.memberKeys)
        broadcast(.messageReceived(message), to: state.channel.memberIds)
        return message
    }

    func applyUpdate(channelURL: String, messageId: Int64, text: String, by userId: String?) throws -> Message {
        var state = try takeChannelState(channelURL)
        guard let index = state.index(of: messageId) else {
            channelStates[channelURL] = state
            throw ChatServiceError.permanent(.notFound, "no message \(messageId) in \(channelURL)")
        }
        if let userId, !state.messages[index].isSent(by: userId) {
            channelStates[channelURL] = state
            throw ChatServiceError.permanent(.forbidden, "\(userId) may only edit their own messages")
        }
        state.messages[index].text = text
        state.messages[index].updatedAt = tick()
        let message = state.messages[index]
        changeSeq += 1
        state.changes.append((changeSeq, messageId))
        if state.channel.lastMessage?.messageId == messageId {
            state.channel.lastMessage = message
            recordChannelChange(channelURL, users: state.channel.memberKeys)
        }
        channelStates[channelURL] = state
        broadcast(.messageUpdated(message), to: state.channel.memberIds)
        return message
    }

    func applyDelete(channelURL: String, messageId: Int64, by userId: String?) throws {
        var state = try takeChannelState(channelURL)
        guard let index = state.index(of: messageId) else {
            channelStates[channelURL] = state
            throw ChatServiceError.permanent(.notFound, "no message \(messageId) in \(channelURL)")
        }
        if let userId, !state.messages[index].isSent(by: userId) {
            channelStates[channelURL] = state
            throw ChatServiceError.permanent(.forbidden, "\(userId) may only delete their own messages")
        }
        state.messages.remove(at: index)
        state.createdAtById[messageId] = nil
        changeSeq += 1
        state.changes.append((changeSeq, messageId))
        if state.channel.lastMessage?.messageId == messageId {
            state.channel.lastMessage = state.messages.last
            recordChannelChange(channelURL, users: state.channel.memberKeys)
        }
        channelStates[channelURL] = state
        broadcast(.messageDeleted(channelURL: channelURL, messageId: messageId), to: state.channel.memberIds)
    }

    func fileURL(_ number: Int, _ name: String) -> String {
        "https://files.simulated.invalid/\(number)/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? "file")"
    }
}

extension SimulatedChatServer.ChannelState {
    /// The position of a live message, found by binary search on its key.
    func index(of messageId: Int64) -> Int? {
        guard let createdAt = createdAtById[messageId] else { return nil }
        let key = MessageKey(createdAt: createdAt, messageId: messageId)
        let index = messages.partitionPoint { $0.sortKey < key }
        return index < messages.count && messages[index].messageId == messageId ? index : nil
    }
}
