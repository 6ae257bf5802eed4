import Foundation

// MARK: - The outbox: presenting, sending, resolving

extension SyncEngine {
    static let pendingStates: Set<SyncState> = [.created, .uploading, .syncing]

    var now: Int64 { options.currentTime() }

    // MARK: Presenting entries in views

    /// Shows an entry's state in its channel's views and to its observers.
    ///
    /// - Parameter entering: the entry joins a list now (a new message, or one that just
    ///   failed): views that do not hold it yet add it. Otherwise only views that hold
    ///   it are updated (Guarantees: Pending and failed lists; older entries join through fetchPending/FailedMessages).
    func present(_ entry: OutboxEntry, entering: Bool = false, reason: FailedMessageEventActionReason = .none) {
        for view in views(of: entry.channelURL) where view.filter.matches(entry.message) {
            if entry.isInFailedList {
                let joinedNow = view.isPending(entry.reqId)
                view.removePending(entry.reqId)
                if entering || joinedNow || view.isFailed(entry.reqId) {
                    view.upsertFailed(entry.message, reason: reason)
                }
            } else if entering || view.isPending(entry.reqId) {
                view.upsertPending(entry.message)
            }
        }
        observers.publish(entry.message)
    }

    /// Removes an entry from its channel's views and ends its observers.
    func withdraw(_ entry: OutboxEntry, reason: FailedMessageEventActionReason) {
        for view in views(of: entry.channelURL) {
            view.removePending(entry.reqId)
            view.removeFailed(entry.reqId, reason: reason)
        }
        observers.finish(entry.reqId)
    }

    /// Writes a changed entry and presents it.
    @discardableResult
    func save(_ entry: OutboxEntry, entering: Bool = false, reason: FailedMessageEventActionReason = .none) throws -> OutboxEntry {
        try store.updateOutbox(entry)
        present(entry, entering: entering, reason: reason)
        return entry
    }

    // MARK: Sending

    /// Validates, stores the message in the outbox (one transaction), shows it as
    /// pending, and wakes its lane. Answers the stored message.
    func send(_ params: MessageParams, channelURL: String) throws -> Message {
        try checkOpen()
        let file = try validate(params, channelURL: channelURL)
        let (userId, time, reqId) = (userId, now, UUID().uuidString)
        // One transaction: the membership check, the time floor and the insert.
        let entry = try store.write { db -> OutboxEntry in
            if let members = try ChatStore.channelMembers(channelURL, in: db), !members.isEmpty, !members.contains(userId) {
                throw SyncManagerError(.invalidParameter, "\(userId) is not a member of \(channelURL)")
            }
            let createdAt = max(time, try ChatStore.newestCreatedAt(channelURL, in: db) ?? .min)
            let message = Message(
                reqId: reqId, channelURL: channelURL, senderId: userId, kind: params.kind, text: params.text,
                customType: params.customType, data: params.data, file: file, parentMessageId: params.parentMessageId,
                createdAt: createdAt, syncState: .created)
            return try ChatStore.insertOutbox(OutboxEntry(message: message), in: db)
        }
        present(entry, entering: true)
        kickLanes(channelURL)
        return entry.message
    }

    /// Checks what only the client can check; answers the attachment to store.
    private func validate(_ params: MessageParams, channelURL: String) throws -> FileInfo? {
        func invalid(_ why: String) -> SyncManagerError { SyncManagerError(.invalidParameter, why) }
        guard !channelURL.isEmpty else { throw invalid("channelURL must not be empty") }
        guard params.text.count <= SendLimits.maxTextLength else {
            throw invalid("the text is longer than \(SendLimits.maxTextLength) characters")
        }
        guard params.data.utf8.count <= SendLimits.maxDataSize else {
            throw invalid("the data is larger than \(SendLimits.maxDataSize) bytes")
        }
        switch params.kind {
        case .text:
            guard !params.text.allSatisfy(\.isWhitespace) else {
                throw invalid("a text message needs text")
            }
            return nil
        case .custom:
            guard !params.customType.isEmpty else { throw invalid("a custom message needs a customType") }
            return nil
        case .image, .video, .audio, .file:
            guard let path = params.localPath, !path.isEmpty else { throw invalid("a media message needs a file") }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw invalid("no file at \(path)")
            }
            guard FileManager.default.isReadableFile(atPath: path) else { throw invalid("the file at \(path) cannot be read") }
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            guard size <= SendLimits.maxFileSize else {
                throw invalid("the file is larger than \(SendLimits.maxFileSize) bytes")
            }
            let name = params.fileName.flatMap { $0.isEmpty ? nil : $0 } ?? URL(fileURLWithPath: path).lastPathComponent
            return FileInfo(name: name, mimeType: params.mimeType ?? "application/octet-stream", size: size, localPath: path)
        }
    }

    // MARK: Resolving

    /// A message of this device is stored on the server: it leaves the outbox and,
    /// where that keeps views contiguous, enters the succeeded lists.
    func resolveSent(reqId: String, sent: Message) throws {
        var sent = sent
        sent.syncState = .synced
        sent.uploadProgress = nil
        sent.failure = nil
        guard let entry = try store.outboxEntry(reqId: reqId) else { return }  // resolved (by its echo) or cancelled
        try store.deleteOutbox(reqId: reqId)
        reportedProgress[reqId] = nil
        manualResends.remove(reqId)
        remember(sent)
        observers.publish(sent)
        noteNewMessage(sent)
        let channelURL = sent.channelURL
        if let live = channels[channelURL]?.liveEdge, sent.sortKey > live {
            // Its real-time echo will place it; until then it stays where it is shown.
            awaitingEcho[reqId] = sent
            return
        }
        withdraw(entry, reason: .removeResendSucceeded)
        if try isInCompleteRange(sent.sortKey, in: channelURL) {
            try store.upsertMessages([sent])
            refreshViews(channelURL, with: [sent])
        }
    }

    /// A message arrived from the service (real time or sync): if it is one of ours still
    /// in the outbox, or awaiting its echo, it is resolved now. Removals come first; the
    /// caller inserts it where it belongs. Many services echo a message without its
    /// request id: an awaited echo is also recognised by its id, and gets its request id back.
    func resolveArrival(_ message: inout Message) throws {
        if message.reqId.isEmpty, !awaitingEcho.isEmpty {
            let id = (message.channelURL, message.messageId)
            if let reqId = awaitingEcho.first(where: { ($0.value.channelURL, $0.value.messageId) == id })?.key {
                message.reqId = reqId
            }
        }
        guard !message.reqId.isEmpty else { return }
        // A request id names a message within one channel: the same id elsewhere, or on
        // another message, is not this device's echo (a confused or hostile service).
        if let awaited = awaitingEcho[message.reqId], awaited.channelURL == message.channelURL,
            awaited.messageId == message.messageId
        {
            awaitingEcho[message.reqId] = nil
            for view in views(of: message.channelURL) {
                view.removePending(message.reqId)
                view.removeFailed(message.reqId, reason: .removeResendSucceeded)
            }
            return
        }
        guard let entry = try store.outboxEntry(reqId: message.reqId), entry.channelURL == message.channelURL else { return }
        try store.deleteOutbox(reqId: message.reqId)
        awaitingReconciliation.remove(message.reqId)
        manualResends.remove(message.reqId)
        var synced = message
        synced.syncState = .synced
        remember(synced)
        observers.publish(synced)
        withdraw(entry, reason: .removeResendSucceeded)
    }

    /// Keeps a synced message of this device for `message(reqId:)`.
    private func remember(_ message: Message) {
        if recentlySynced.updateValue(message, forKey: message.reqId) == nil { recentlySyncedOrder.append(message.reqId) }
        if recentlySyncedOrder.count > 1_000 { recentlySynced[recentlySyncedOrder.removeFirst()] = nil }
    }

    // MARK: The app's calls

    func resend(reqId: String) throws -> Message {
        try checkOpen()
        guard let entry = try store.outboxEntry(reqId: reqId), entry.message.syncState == .failed else {
            throw SyncManagerError(.invalidParameter, "no failed message with reqId '\(reqId)'")
        }
        guard entry.origin == .outbox else {
            throw SyncManagerError(.invalidParameter, "'\(reqId)' was sent by the host app; resend it through its SDK")
        }
        try requeue(reqId: reqId, manual: true)
        return try store.outboxEntry(reqId: reqId)?.message ?? entry.message
    }

    func cancel(reqId: String) throws {
        try checkOpen()
        guard let entry = try store.outboxEntry(reqId: reqId), entry.message.syncState == .created || entry.message.syncState == .failed
        else {
            throw SyncManagerError(.invalidParameter, "only a waiting or failed message can be cancelled ('\(reqId)')")
        }
        try drop(entry, reason: .removeManualAction)
    }

    func deleteFailed(reqId: String) throws {
        try checkOpen()
        guard let entry = try store.outboxEntry(reqId: reqId), entry.message.syncState == .failed else {
            throw SyncManagerError(.invalidParameter, "no failed message with reqId '\(reqId)'")
        }
        try drop(entry, reason: .removeManualAction)
    }

    func deleteAllFailed(channelURL: String?) throws {
        try checkOpen()
        for entry in try store.outboxEntries(channelURL: channelURL, states: [.failed]) {
            try drop(entry, reason: .removeManualAction)
        }
    }

    func message(reqId: String) -> Message? {
        guard !isClosed else { return nil }
        if let entry = try? store.outboxEntry(reqId: reqId) { return entry.message }
        if let cached = try? store.message(reqId: reqId) { return cached }
        return awaitingEcho[reqId] ?? recentlySynced[reqId]
    }

    func observe(reqId: String, _ continuation: AsyncStream<Message>.Continuation) {
        guard let current = message(reqId: reqId) else {
            continuation.finish()
            return
        }
        continuation.yield(current)
        if current.syncState == .synced {
            continuation.finish()
            return
        }
        let id = observers.add(reqId, continuation)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.stopObserving(reqId, id) }
        }
    }

    private func stopObserving(_ reqId: String, _ id: Int) {
        observers.remove(reqId, id: id)
    }
}
