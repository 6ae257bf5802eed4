/// What the engine knows about its outbox beyond the table: facts that live only as
/// long as the process (which lanes run, which answers wait for their echo, which
/// entries an earlier run left unknown, which resends the app asked for, upload
/// progress, and messages that synced lately).
///
/// Every fact is keyed by request id, and the three ways an entry stops being in
/// flight (it synced, it failed, it was dropped) each end all of them here, in one
/// place, so that no path leaves a stale fact behind.
struct OutboxBookkeeping {
    /// Lanes with a runner, so each lane has at most one message in flight.
    var runningLanes: Set<LaneKey> = []
    /// Messages this device sent whose response came before their real-time echo,
    /// while the channel was live: they stay pending in views until the echo puts them
    /// in the cache at their place, so they never flicker or leave a hole.
    private(set) var awaitingEcho: [String: Message] = [:]
    /// Where each awaited message is listed, so that a collection that lists it later
    /// places it as the ones that listed it when it was sent do.
    private var awaitedPlaces: [String: AwaitedPlace] = [:]

    /// Where an awaited message is listed: with the `createdAt` it had in the outbox (the
    /// device's clock, however far from the service's), and in the failed list for one
    /// answered on a resend, which stays there until its echo (API §4.3).
    private struct AwaitedPlace {
        let listedAt: Int64
        let inFailedList: Bool
    }
    /// Pending messages of an earlier run whose fate the service must be asked
    /// (Guarantees: Relaunch). A lane waits behind such a head.
    var awaitingReconciliation: Set<String> = []
    /// Whether the automatic resends of an earlier run were scheduled again (first resume).
    var restoredAutomaticResends = false
    /// Request ids being resent by the app (not by the automatic policy).
    private(set) var manualResends: Set<String> = []
    /// The automatic resend each failed message waits for, by request id: a timer that
    /// is no longer its message's (the app resent it first, or it failed again since)
    /// finds another number here, or none, and does nothing.
    private var resendTimers: [String: Int] = [:]
    private var lastResendTimer = 0
    /// The last upload progress reported per request id, for throttling.
    var reportedProgress: [String: Double] = [:]
    /// Uploads in flight, so that cancelling a message cancels its upload.
    var uploads: [String: Task<FileInfo, any Error>] = [:]
    /// Channels whose failed sends that may be stored are being asked about
    /// (`SyncEngine.confirmStoredSendsInBackground`), with the connection each chain runs
    /// in: one chain per channel, and a new connection's takes over from an older one.
    var confirmingStored: [String: Int] = [:]
    /// Messages of this device that synced lately, for `message(reqId:)`.
    private(set) var recentlySynced = RecentlySynced()
    /// The host's answers to sends it handed over before the app appended the message
    /// (two tasks of the host racing): the append resolves with them at once. At most
    /// ``hostAnswerCapacity`` are kept; an answer never followed by its append is dropped.
    private(set) var hostAnswersBeforeAppend: [String: HostAnswer] = [:]
    static let hostAnswerCapacity = 100

    /// The host's answer to a message, and its channel's end mark
    /// (``HistoryDrops/endMark(_:)``) when it came: handed over after the channel
    /// ended, it names a message that went with it.
    struct HostAnswer {
        let message: Message
        let endMark: Int
    }

    /// Keeps the host's answer for a message not appended yet.
    mutating func keepHostAnswer(_ answer: Message, endMark: Int) {
        if hostAnswersBeforeAppend.count >= Self.hostAnswerCapacity, let any = hostAnswersBeforeAppend.keys.first {
            hostAnswersBeforeAppend[any] = nil
        }
        hostAnswersBeforeAppend[answer.reqId] = HostAnswer(message: answer, endMark: endMark)
    }

    /// The host's answer kept for `reqId`, taken.
    mutating func takeHostAnswer(_ reqId: String) -> HostAnswer? { hostAnswersBeforeAppend.removeValue(forKey: reqId) }

    /// The channel's end mark when the host appended each message still in the outbox in
    /// this run (see ``HostAnswer``). One appended before a relaunch counts from the run's
    /// start, where every mark is 0.
    private var hostEndMarks: [String: Int] = [:]

    /// Notes the end mark of the channel the host appended `reqId` to.
    mutating func noteHostAppend(_ reqId: String, endMark: Int) { hostEndMarks[reqId] = endMark }

    /// The end mark noted when the host appended `reqId` (0 if before this run).
    func hostEndMark(_ reqId: String) -> Int { hostEndMarks[reqId] ?? 0 }

    /// Messages the service deleted during this run, so that an answer naming one is
    /// known for a message sent and deleted since.
    var deletedLately = DeletedLately()

    /// The newest `createdAt` each channel's pending and failed lists got in this run (a
    /// send, a host's message, an answer listed while its echo is awaited), so that the
    /// next send is dated after it: a channel's own messages never share a millisecond.
    private var newestListed: [String: Int64] = [:]
    /// Channels whose outbox rows of earlier runs were read for their newest `createdAt`.
    private var outboxTimesRead: Set<String> = []

    /// The `createdAt` of the newest message this run listed in the channel, if any.
    func newestListedAt(_ channelURL: String) -> Int64? { newestListed[channelURL] }

    /// Whether the channel's outbox rows were read for their newest `createdAt` (once per
    /// channel and run: later rows are this run's, which ``newestListedAt(_:)`` knows).
    func hasReadOutboxTimes(_ channelURL: String) -> Bool { outboxTimesRead.contains(channelURL) }

    /// A message was listed in the channel with `createdAt`; with `outboxRead`, the
    /// outbox's earlier rows were read too.
    mutating func noteListed(channelURL: String, createdAt: Int64, outboxRead: Bool = false) {
        newestListed[channelURL] = max(newestListed[channelURL] ?? .min, createdAt)
        if outboxRead { outboxTimesRead.insert(channelURL) }
    }

    /// Request ids sent at least once in this run: a later attempt may be answered with
    /// what an earlier one stored.
    private var attempted: Set<String> = []

    /// Request ids of this run whose send request went and whose answer was lost at least
    /// once (a timeout, a connection that broke, or an answer that made no sense; not an
    /// upload's), and those whose first try in this run found them possibly stored by an
    /// earlier run's (see ``mayHaveLostAnswer(_:)``): the service may hold them whatever a
    /// later try heard.
    private var answersLost: Set<String> = []
    /// Failed messages of an earlier run, not tried in this one, that a look-up by request
    /// id has answered for in this run.
    private var earlierRunFailuresAsked: Set<String> = []

    /// A send request went and its answer was lost: the service may hold the message.
    mutating func noteAnswerLost(_ reqId: String) { answersLost.insert(reqId) }

    /// A look-up answered for `reqId`, a failed message not tried in this run.
    mutating func noteEarlierRunFailureAsked(_ reqId: String) { earlierRunFailuresAsked.insert(reqId) }

    /// Whether an answer to sending `reqId` may have been lost: one was in this run, or
    /// it was last tried in an earlier run (which tries' answers were lost is not kept
    /// across a relaunch) and no look-up has answered for it since.
    func mayHaveLostAnswer(_ reqId: String) -> Bool {
        answersLost.contains(reqId) || (!attempted.contains(reqId) && !earlierRunFailuresAsked.contains(reqId))
    }

    /// Whether a send request of this entry went in this run.
    func wasAttempted(_ reqId: String) -> Bool { attempted.contains(reqId) }

    /// The service answered `answer` for an outbox entry listed at `listedAt` (in the
    /// failed list, for a resend); its echo is awaited.
    mutating func awaitEcho(of answer: Message, listedAt: Int64, inFailedList: Bool) {
        // Its outbox row is gone, but it stays listed at that time until its echo.
        noteListed(channelURL: answer.channelURL, createdAt: listedAt)
        awaitingEcho[answer.reqId] = answer
        awaitedPlaces[answer.reqId] = AwaitedPlace(listedAt: listedAt, inFailedList: inFailedList)
    }

    /// A newer version of an awaited message (an edit the service took) replaces the answer kept.
    mutating func replaceAwaitedAnswer(_ answer: Message) {
        guard awaitingEcho[answer.reqId] != nil else { return }
        awaitingEcho[answer.reqId] = answer
    }

    /// The echo came, or will not: answers the answer that was kept.
    mutating func endAwaitingEcho(_ reqId: String) -> Message? {
        awaitedPlaces[reqId] = nil
        return awaitingEcho.removeValue(forKey: reqId)
    }

    /// The `createdAt` an awaited message was listed with when it was sent.
    func listedAt(awaited reqId: String) -> Int64? { awaitedPlaces[reqId]?.listedAt }

    /// Whether an awaited message was answered on a resend, so belongs to the failed list.
    func isAwaitedInFailedList(_ reqId: String) -> Bool { awaitedPlaces[reqId]?.inFailedList == true }

    /// A send request is about to go; answers whether an earlier one of this run went.
    mutating func noteAttempt(_ reqId: String) -> Bool { !attempted.insert(reqId).inserted }

    /// The app cancelled a message while its file was uploading.
    mutating func cancelUpload(_ reqId: String) {
        uploads.removeValue(forKey: reqId)?.cancel()
    }

    /// The app asked to resend a failed message.
    mutating func noteManualResend(_ reqId: String) {
        manualResends.insert(reqId)
        resendTimers[reqId] = nil
    }

    /// A new automatic resend of `reqId` is scheduled: it replaces any earlier one.
    mutating func startResendTimer(_ reqId: String) -> Int {
        lastResendTimer += 1
        resendTimers[reqId] = lastResendTimer
        return lastResendTimer
    }

    /// Whether `timer` is still the resend `reqId` waits for; if it is, it ends here.
    mutating func endResendTimer(_ timer: Int, of reqId: String) -> Bool {
        guard resendTimers[reqId] == timer else { return false }
        resendTimers[reqId] = nil
        return true
    }

    /// The entry left the outbox because the service has it: every in-flight fact about
    /// it ends, and it is remembered as synced.
    /// With `gone`, the answer named a message deleted since (a look-up after a relaunch,
    /// a resend answered with what an earlier attempt stored): it is not remembered.
    mutating func retire(_ synced: Message, gone: Bool = false) {
        forget(synced.reqId)
        guard !gone else { return }
        recentlySynced.remember(synced)
    }

    /// The service deleted these messages: remembered as deleted, and no longer answered as synced.
    mutating func noteDeleted(channelURL: String, messageIds: [Int64]) {
        deletedLately.remember(channelURL: channelURL, messageIds: messageIds)
        recentlySynced.forget(channelURL: channelURL, messageIds: messageIds)
    }

    /// The message turned out deleted already (missing from a range the cache holds as
    /// complete): it is no longer answered as synced.
    mutating func forgetSynced(_ message: Message) {
        recentlySynced.forget(channelURL: message.channelURL, messageIds: [message.messageId])
    }

    /// A newer version of a message of this device arrived: a remembered copy follows it.
    mutating func noteUpdated(_ message: Message) { recentlySynced.refresh(message) }

    /// The channel's history can no longer be trusted, or the channel is gone (every
    /// channel's, with `nil`: the cache was cleared): its synced copies go with it.
    mutating func forgetSyncedCopies(in channelURL: String?) { recentlySynced.forgetAll(in: channelURL) }

    /// The messages an earlier run remembered as synced lately, oldest first.
    mutating func restoreSynced(_ messages: [Message]) {
        for message in messages { recentlySynced.remember(message) }
    }

    /// A send attempt failed: the entry is no longer uploading or resent by hand.
    /// Answers whether the attempt was a resend the app asked for.
    mutating func endAttempt(_ reqId: String) -> Bool {
        reportedProgress[reqId] = nil
        return manualResends.remove(reqId) != nil
    }

    /// The entry left the outbox without syncing (cancelled, dropped, or failed under
    /// the `.none` policy): every in-flight fact about it ends.
    mutating func forget(_ reqId: String) {
        attempted.remove(reqId)
        answersLost.remove(reqId)
        earlierRunFailuresAsked.remove(reqId)
        awaitingReconciliation.remove(reqId)
        manualResends.remove(reqId)
        resendTimers[reqId] = nil
        reportedProgress[reqId] = nil
        hostEndMarks[reqId] = nil
    }
}
