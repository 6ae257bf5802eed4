import Foundation

// MARK: - Sending: a new message enters the outbox

extension SyncEngine {

    /// Validates, stores the message in the outbox (one transaction), shows it as
    /// pending, and wakes its lane. Answers the stored message.
    func send(_ params: MessageParams, channelURL: String) throws -> Message {
        try checkOpen()
        let file = try validate(params, channelURL: channelURL)
        let (userId, time, reqId) = (userId, now, RandomIdentifier.make())
        // One transaction: the membership check, the time floor and the insert.
        let entry = try store.write { db -> OutboxEntry in
            let check = try ChatStore.sendCheck(channelURL: channelURL, userId: userId, in: db)
            guard check.isMember else { throw SyncManagerError(.invalidParameter, "\(userId) is not a member of \(channelURL)") }
            // Never in the millisecond of a message the channel's lists hold: they order by
            // `createdAt`, and a tie would be ordered by when each collection heard of each
            // message, which differs between collections.
            var newestListed = outbox.newestListedAt(channelURL)
            if !outbox.hasReadOutboxTimes(channelURL), let older = try ChatStore.newestOutboxCreatedAt(channelURL: channelURL, in: db) {
                newestListed = max(newestListed ?? .min, older)
            }
            let afterListed = newestListed.map { $0 < .max ? $0 + 1 : $0 } ?? .min
            let createdAt = max(time, check.newestCreatedAt ?? .min, afterListed)
            let message = Message(
                reqId: reqId, channelURL: channelURL, senderId: userId, kind: params.kind, text: params.text,
                customType: params.customType, data: params.data, file: file, parentMessageId: params.parentMessageId,
                createdAt: createdAt, syncState: .created)
            return try ChatStore.insertOutbox(OutboxEntry(message: message), in: db)
        }
        outbox.noteListed(channelURL: channelURL, createdAt: entry.message.createdAt, outboxRead: true)
        present(entry, entering: true)
        kickLane(LaneKey(channelURL: channelURL, lane: entry.lane))
        return entry.message
    }

    /// Checks what only the client can check; answers the attachment to store.
    private func validate(_ params: MessageParams, channelURL: String) throws -> FileInfo? {
        func invalid(_ why: String) -> SyncManagerError { SyncManagerError(.invalidParameter, why) }
        try Self.checkKey(channelURL, named: "channelURL")
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
}
