// MARK: - Send lanes

extension SyncEngine {
    /// The states of a message still to be sent (or being sent).
    static let pendingStates: Set<SyncState> = [.created, .uploading, .syncing]

    /// Starts a runner for every lane (of one channel, or all) that has messages to
    /// send and none running. Nothing starts while offline or paused.
    func kickLanes(_ channelURL: String? = nil) {
        guard isOnline else { return }
        let entries = (try? store.outboxEntries(channelURL: channelURL, states: Self.pendingStates)) ?? []
        var lanes = Set(entries.filter { $0.origin == .outbox }.map { LaneKey(channelURL: $0.channelURL, lane: $0.lane) })
        for operationChannel in pendingWrites.channelURLs where channelURL == nil || channelURL == operationChannel {
            lanes.insert(LaneKey(channelURL: operationChannel, lane: .text))
        }
        for lane in lanes.sorted(by: { $0.description < $1.description }) { kickLane(lane) }
    }

    /// Starts the runner of one lane that was just given work, unless it runs already:
    /// a send wakes its own lane without reading its channel's whole outbox, which a
    /// burst of sends behind a slow connection would otherwise read once per send.
    func kickLane(_ lane: LaneKey) {
        guard isOnline, !outbox.runningLanes.contains(lane) else { return }
        outbox.runningLanes.insert(lane)
        runInBackground { await $0.runLane(lane) }
    }

    /// Sends a lane's messages strictly one at a time in creation order: the head is
    /// synced or failed before the next one goes. The text lane carries the channel's
    /// edits and deletions too, in the same order.
    private func runLane(_ lane: LaneKey) async {
        defer { outbox.runningLanes.remove(lane) }
        while isOnline {
            let head = try? store.laneHead(channelURL: lane.channelURL, lane: lane.lane, states: Self.pendingStates)
            if lane.lane == .text, let operation = pendingWrites.head(of: lane.channelURL), operation.seq < head?.seq ?? .max {
                guard await attempt(operation) else { return }
                continue
            }
            guard let head else { return }
            // A message in flight when the app last stopped is asked about first (Guarantees: Relaunch).
            if outbox.awaitingReconciliation.contains(head.reqId) { return }
            guard await attempt(head) else { return }
        }
    }

    /// One try at sending the lane's head: upload its file if it has none yet, then
    /// send. Answers `false` when the outbox itself failed and the lane must stop.
    private func attempt(_ head: OutboxEntry) async -> Bool {
        let reqId = head.reqId
        let epochAtStart = epoch
        do {
            var entry = head
            if entry.message.kind.hasAttachment, entry.message.file?.url == nil {
                entry.message.syncState = .uploading
                entry.message.uploadProgress = 0
                try save(entry)
                let uploaded = try await upload(entry)
                guard var current = try store.outboxEntry(reqId: reqId) else { return true }
                current.message.file?.url = uploaded.url
                current.message.file?.size = uploaded.size
                current.message.uploadProgress = nil
                entry = current
            }
            entry.message.syncState = .syncing
            entry.mayBeStored = true  // stored before the request goes, so a relaunch knows too
            try save(entry)
            let request = SendMessageRequest(
                reqId: reqId, channelURL: entry.channelURL, kind: entry.message.kind, text: entry.message.text,
                customType: entry.message.customType, data: entry.message.data, file: entry.message.file,
                parentMessageId: entry.message.parentMessageId)
            // An earlier run's try may have stored it, its answer lost, and no look-up has
            // answered since: this run's refusals must not make the outbox forget it, or the
            // message fails unasked while the service holds it (outbox model, seed + 140,000).
            if head.mayBeStored, !outbox.wasAttempted(reqId), outbox.mayHaveLostAnswer(reqId) { outbox.noteAnswerLost(reqId) }
            // A request went out before (in this run, or in an earlier one: `mayBeStored` is
            // on file), so the answer may be a copy stored then and deleted since.
            let mayBeRepeat = outbox.noteAttempt(reqId) || head.attempts > 0 || head.isInFailedList || head.mayBeStored
            let endMark = historyDrops.endMark(entry.channelURL)
            let sent = try Self.checkedAnswer(try await service.sendMessage(request), to: request)
            guard !isClosed else { return false }
            try resolveSent(reqId: reqId, sent: sent, channelEnded: historyDrops.endMark(entry.channelURL) != endMark)
            if mayBeRepeat, outbox.awaitingEcho[reqId] != nil { checkAwaitedAnswerInBackground(sent) }
        } catch let error as SyncManagerError {
            // Closed while the request was out: the store is gone and the relaunch asks.
            if !isClosed { logger.error("the outbox could not record the state of \(reqId): \(error)") }
            return false
        } catch {
            await handleSendError(reqId: reqId, error, epochAtStart: epochAtStart, mayBeStoredBefore: head.mayBeStored)
        }
        return true
    }

    /// The service's answer to a send, if it describes the message sent: a stored message
    /// (positive id) in the request's channel with its request id (filled in when the
    /// service leaves it out). Anything else is a bad response, a transient error: the
    /// send is retried, and the service answers a repeated request id with what it stored.
    static func checkedAnswer(_ answer: Message, to request: SendMessageRequest) throws -> Message {
        var sent = answer
        if sent.reqId.isEmpty { sent.reqId = request.reqId }
        guard sent.messageId > 0, sent.channelURL == request.channelURL, sent.reqId == request.reqId else {
            throw ChatServiceError.transient(
                .badResponse,
                "the answer to sending \(request.reqId) describes another message (\(sent.channelURL)/\(sent.messageId)/\(sent.reqId))")
        }
        return sent
    }

    /// A transient error is retried after `sendRetryInterval`, at most `sendRetryLimit`
    /// times; one that only says the service could not be reached (or the connection
    /// was lost meanwhile) waits for the connection without spending a retry; a
    /// permanent one fails the message at once. `mayBeStoredBefore`: whether the service
    /// might hold the message before this try (an earlier one's answer was lost).
    private func handleSendError(reqId: String, _ error: any Error, epochAtStart: Int, mayBeStoredBefore: Bool) async {
        do {
            guard !isClosed, var entry = try store.outboxEntry(reqId: reqId) else { return }
            let classified = ChatServiceError.classify(error)
            if classified.code == .badResponse { logger.warning("the service's answer to sending \(reqId) was refused: \(classified)") }
            // A refusal the service answered stored nothing: the message is as likely held
            // as before this try, and a `.created` message that only ever met refusals stays
            // cancellable (API §4.6). Before, one 503 made it uncancellable until it failed
            // (an adversarial review's finding).
            if Self.storedNothing(classified) { entry.mayBeStored = mayBeStoredBefore }
            // Saved as syncing just before the send request went (an upload's failure is not a send's).
            if Self.answerMayBeLost(classified.failure), entry.message.syncState == .syncing { outbox.noteAnswerLost(reqId) }
            entry.message.uploadProgress = nil
            // Refused for good after an earlier try's answer was lost: that try may have stored it.
            guard classified.isTransient else {
                return try await outbox.mayHaveLostAnswer(reqId)
                    ? failUnlessStored(entry, failure: classified.failure) : fail(entry, failure: classified.failure)
            }
            let unreachable = classified.code == .network || !isOnline || epoch != epochAtStart
            if !unreachable { entry.attempts += 1 }
            guard entry.attempts <= options.sendRetryLimit else { return try await failUnlessStored(entry, failure: classified.failure) }
            entry.message.syncState = .created
            try save(entry)
            logger.debug("send of \(reqId) failed (\(classified)); retrying after \(options.sendRetryInterval)")
            if isOnline { try await options.clock.sleep(for: options.sendRetryInterval) }
        } catch {
            logger.debug("retry wait of \(reqId) ended: \(error)")
        }
    }

    /// Whether a send that failed so stored nothing on the service: the service answered
    /// with a refusal (a permanent code, 429, 503). A timeout, an answer that could not be
    /// read or a 500 may follow a stored message; so may `.network`, which the seam
    /// documents as "not reached" but the HTTP services of Samples and Matrix also throw
    /// for a connection that broke after the request went.
    static func storedNothing(_ error: ChatServiceError) -> Bool {
        !error.isTransient || [.rateLimited, .unavailable].contains(error.code)
    }

    // MARK: Upload

    /// Uploads the entry's file, reporting progress in order through one stream.
    private func upload(_ entry: OutboxEntry) async throws -> FileInfo {
        guard let file = entry.message.file, let localPath = file.localPath else {
            throw ChatServiceError.permanent(.invalid, "the message has no file to upload")
        }
        let request = UploadRequest(
            reqId: entry.reqId, channelURL: entry.channelURL, localPath: localPath, name: file.name,
            mimeType: file.mimeType, size: file.size)
        let (progress, continuation) = AsyncStream<Double>.makeStream()
        let reqId = entry.reqId
        let reporter = Task { [weak self] in
            for await fraction in progress { await self?.reportUploadProgress(reqId, fraction) }
        }
        defer {
            reporter.cancel()
            outbox.uploads[reqId] = nil
        }
        let service = service
        let task = Task { try await service.uploadFile(request) { continuation.yield($0) } }
        outbox.uploads[reqId] = task
        do {
            // The upload is its own task (so that a cancel can reach it alone); closing the
            // manager cancels the lane's task, which passes the cancellation on.
            let uploaded = try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
            continuation.finish()
            await reporter.value
            return uploaded
        } catch {
            continuation.finish()
            await reporter.value
            throw error
        }
    }

    /// Shows upload progress in steps of at least 5 %, and the end.
    private func reportUploadProgress(_ reqId: String, _ fraction: Double) {
        let last = outbox.reportedProgress[reqId] ?? 0
        let clamped = min(max(fraction, 0), 1)
        guard clamped - last >= 0.05 || (clamped == 1 && last < 1) else { return }
        guard var entry = try? store.outboxEntry(reqId: reqId), entry.message.syncState == .uploading else { return }
        outbox.reportedProgress[reqId] = clamped
        entry.message.uploadProgress = clamped
        _ = try? save(entry)
    }
}
