import ChatSync
import Foundation

// MARK: - Requests from users' services

extension SimulatedChatServer {
    /// Counts the request and applies the connection and the fault plan before it is applied.
    private func admit(_ userId: String) throws {
        requestCount += 1
        if offlineUsers.contains(UserKey(userId)) { throw ChatServiceError.transient(.network, "\(userId) is offline") }
        if random.chance(faults.failRequestRate) {
            throw ChatServiceError.transient(.unavailable, "injected failure: request rejected")
        }
    }

    /// Applies the fault plan after the request was applied: the response may be lost.
    private func respond<T>(_ value: T) throws -> T {
        if random.chance(faults.loseResponseRate) {
            throw ChatServiceError.transient(.timeout, "injected failure: response lost")
        }
        return value
    }

    private func memberState(_ channelURL: String, _ userId: String) throws -> ChannelState {
        let state = try channelState(channelURL)
        guard state.channel.hasMember(userId) else {
            throw ChatServiceError.permanent(.forbidden, "\(userId) is not a member of \(channelURL)")
        }
        return state
    }

    func handleFetchMessages(_ query: MessageQuery, as userId: String) throws -> MessagePage {
        try admit(userId)
        guard query.prevLimit >= 0, query.nextLimit >= 0 else {
            throw ChatServiceError.permanent(.invalid, "limits must not be negative")
        }
        let messages = try memberState(query.channelURL, userId).messages
        let matches = { (message: Message) in query.filter?.matches(message) ?? true }

        var previous: [Message] = []
        var hasPrev = false
        var index = messages.partitionPoint { query.isOnPreviousSide($0.sortKey) } - 1
        while index >= 0 {
            if matches(messages[index]) {
                if previous.count == query.prevLimit { hasPrev = true; break }
                previous.append(messages[index])
            }
            index -= 1
        }
        var next: [Message] = []
        var hasNext = false
        index = messages.partitionPoint { !query.isOnNextSide($0.sortKey) }
        while index < messages.count {
            // With a whole-millisecond inclusive anchor a message can be on both sides; answer it once.
            if matches(messages[index]), !previous.contains(where: { $0.messageId == messages[index].messageId }) {
                if next.count == query.nextLimit { hasNext = true; break }
                next.append(messages[index])
            }
            index += 1
        }
        return try respond(MessagePage(messages: previous.reversed() + next, hasPrev: hasPrev, hasNext: hasNext))
    }

    func handleMessageChangeLogs(channelURL: String, token: String?, limit: Int, as userId: String) throws -> MessageChangeLogs {
        try admit(userId)
        let state = try memberState(channelURL, userId)
        guard let token else {
            return try respond(MessageChangeLogs(updated: [], deletedMessageIds: [], token: messageToken(changeSeq), hasMore: false))
        }
        let since = try messageTokenSequence(token)
        var ids: [Int64] = []
        var seen: Set<Int64> = []
        var last = since
        var hasMore = false
        for change in state.changes where change.seq > since {
            if !seen.contains(change.messageId) {
                if ids.count == max(1, limit) { hasMore = true; break }
                seen.insert(change.messageId)
                ids.append(change.messageId)
            }
            last = change.seq
        }
        if !hasMore { last = max(last, changeSeq) }
        var updated: [Message] = []
        var deleted: [Int64] = []
        for id in ids {
            if let index = state.index(of: id) { updated.append(state.messages[index]) } else { deleted.append(id) }
        }
        return try respond(MessageChangeLogs(updated: updated, deletedMessageIds: deleted, token: messageToken(last), hasMore: hasMore))
    }

    func handleLookUp(channelURL: String, reqIds: [String], as userId: String) throws -> [Message] {
        lookUpCount += 1
        try admit(userId)
        let state = try memberState(channelURL, userId)
        let found = reqIds.compactMap { reqId -> Message? in
            guard let sent = state.sentByReqId[reqId], let index = state.index(of: sent.messageId) else { return nil }
            return state.messages[index]
        }
        if faults.lostLookUpAnswers > 0 {
            faults.lostLookUpAnswers -= 1
            throw ChatServiceError.transient(.timeout, "injected failure: look-up answer lost")
        }
        return try respond(found)
    }

    func handleSend(_ request: SendMessageRequest, as userId: String) throws -> Message {
        if offlineUsers.contains(UserKey(userId)) { unreachedSendLog.append(request.reqId) }
        try admit(userId)
        sendLog.append((request.channelURL, request.reqId))
        let state = try memberState(request.channelURL, userId)
        guard !request.reqId.isEmpty else { throw ChatServiceError.permanent(.invalid, "reqId is empty") }
        if let stored = state.sentByReqId[request.reqId] {
            // Idempotent: the same request id answers the message the first request stored.
            let current = state.index(of: stored.messageId).map { state.messages[$0] } ?? stored
            return try respond(current)
        }
        if state.channel.isFrozen { throw ChatServiceError.permanent(.frozen, "\(request.channelURL) is frozen") }
        if faults.permanentErrorReqIds.contains(request.reqId) || faults.permanentErrorTexts.contains(request.text) {
            throw ChatServiceError.permanent(.invalid, "injected failure: message refused")
        }
        if request.text.count > Self.maxTextLength {
            throw ChatServiceError.permanent(.tooLarge, "text longer than \(Self.maxTextLength) characters")
        }
        if request.kind.hasAttachment, request.file?.url == nil {
            throw ChatServiceError.permanent(.invalid, "a \(request.kind.rawValue) message needs an uploaded file")
        }
        var file = request.file
        file?.localPath = nil
        let message = try store(
            Message(
                reqId: request.reqId, channelURL: request.channelURL, senderId: userId, kind: request.kind,
                text: request.text, customType: request.customType, data: request.data, file: file,
                parentMessageId: request.parentMessageId, createdAt: tick()))
        return try respond(message)
    }

    func handleUpload(_ request: UploadRequest, progress: @Sendable (Double) -> Void, as userId: String) throws -> FileInfo {
        try admit(userId)
        _ = try memberState(request.channelURL, userId)
        for step in 1...10 { progress(Double(step) / 10) }
        uploadCount += 1
        let info = FileInfo(
            name: request.name, mimeType: request.mimeType, size: request.size,
            url: fileURL(uploadCount, request.name))
        return try respond(info)
    }

    func handleUpdate(channelURL: String, messageId: Int64, text: String, operationId: String, as userId: String) throws -> Message {
        try admit(userId)
        _ = try memberState(channelURL, userId)
        try refuseIfLocked(messageId)
        guard isFirstRequest(of: operationId) else {
            // Applied already: the message as it is now (another edit may have come since).
            let state = try channelState(channelURL)
            guard let index = state.index(of: messageId) else {
                throw ChatServiceError.permanent(.notFound, "no message \(messageId) in \(channelURL)")
            }
            return try respond(state.messages[index])
        }
        let edited = try applyUpdate(channelURL: channelURL, messageId: messageId, text: text, by: userId)
        appliedOperations.insert(operationId)
        return try respond(edited)
    }

    func handleDelete(channelURL: String, messageId: Int64, operationId: String, as userId: String) throws {
        try admit(userId)
        _ = try memberState(channelURL, userId)
        try refuseIfLocked(messageId)
        if isFirstRequest(of: operationId) {
            try applyDelete(channelURL: channelURL, messageId: messageId, by: userId)
            appliedOperations.insert(operationId)
        }
        try respond(())
    }

    private func refuseIfLocked(_ messageId: Int64) throws {
        guard faults.lockedMessageIds.contains(messageId) else { return }
        throw ChatServiceError.permanent(.forbidden, "injected failure: message \(messageId) is locked")
    }

    /// Counts a request of an operation; answers whether none with its id was applied before.
    private func isFirstRequest(of operationId: String) -> Bool {
        operationRequests[operationId, default: 0] += 1
        return !appliedOperations.contains(operationId)
    }

    func handleFetchChannels(_ query: ChannelPageQuery, as userId: String) throws -> ChannelPage {
        try admit(userId)
        guard query.limit > 0 else { throw ChatServiceError.permanent(.invalid, "limit must be positive") }
        var channels = channelStates.values.map(\.channel).filter { channel in
            channel.hasMember(userId) && query.matches(channel)
        }
        channels.sort { query.order.sortsBefore($0, $1) }
        if let cursor = query.cursor {
            guard let after = ChannelCursor(encoded: cursor)?.channel else {
                throw ChatServiceError.permanent(.invalid, "unknown channel cursor '\(cursor)'")
            }
            channels.removeAll { !query.order.sortsBefore(after, $0) }
        }
        let page = Array(channels.prefix(query.limit))
        let nextCursor = channels.count > page.count ? page.last.map { ChannelCursor(query.order, $0).encoded } : nil
        return try respond(ChannelPage(channels: page, nextCursor: nextCursor))
    }

    func handleChannelChangeLogs(token: String?, limit: Int, as userId: String) throws -> ChannelChangeLogs {
        try admit(userId)
        guard let token else {
            return try respond(ChannelChangeLogs(updated: [], deletedChannelURLs: [], token: String(changeSeq), hasMore: false))
        }
        guard let since = Int64(token), since >= 0, since <= changeSeq else {
            throw ChatServiceError.permanent(.invalid, "unknown change-log token '\(token)'")
        }
        var urls: [String] = []
        var seen: Set<String> = []
        var last = since
        var hasMore = false
        let user = UserKey(userId)
        for change in channelChanges where change.seq > since && change.users.contains(user) {
            if !seen.contains(change.channelURL) {
                if urls.count == max(1, limit) { hasMore = true; break }
                seen.insert(change.channelURL)
                urls.append(change.channelURL)
            }
            last = change.seq
        }
        if !hasMore { last = max(last, changeSeq) }
        var updated: [Channel] = []
        var deleted: [String] = []
        for url in urls {
            if let channel = channelStates[url]?.channel, channel.hasMember(userId) {
                updated.append(channel)
            } else {
                deleted.append(url)
            }
        }
        return try respond(ChannelChangeLogs(updated: updated, deletedChannelURLs: deleted, token: String(last), hasMore: hasMore))
    }
}
