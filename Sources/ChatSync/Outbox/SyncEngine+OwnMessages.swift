import Foundation

// MARK: - Editing and deleting the user's synced messages

extension SyncEngine {
    private func checkOwn(messageId: Int64, channelURL: String) throws {
        try checkOpen()
        guard messageId > 0, !channelURL.isEmpty else {
            throw SyncManagerError(.invalidParameter, "a synced message needs a channel and a positive messageId")
        }
        if let cached = try store.message(channelURL: channelURL, messageId: messageId), cached.senderId != userId {
            throw SyncManagerError(.invalidParameter, "message \(messageId) was sent by \(cached.senderId), not \(userId)")
        }
    }

    func editOwn(messageId: Int64, channelURL: String, text: String) async throws -> Message {
        try checkOwn(messageId: messageId, channelURL: channelURL)
        guard !text.allSatisfy(\.isWhitespace), text.count <= SendLimits.maxTextLength else {
            throw SyncManagerError(.invalidParameter, "the new text must not be empty or longer than \(SendLimits.maxTextLength)")
        }
        let service = service
        let answer = try await service.updateMessage(channelURL: channelURL, messageId: messageId, text: text)
        guard answer.messageId == messageId, answer.channelURL == channelURL else {
            throw ChatServiceError.transient(.badResponse, "the answer to editing \(messageId) describes another message")
        }
        let edited = answer.asSynced
        try checkOpen()
        applyUpdated([edited])
        return edited
    }

    func deleteOwn(messageId: Int64, channelURL: String) async throws {
        try checkOwn(messageId: messageId, channelURL: channelURL)
        let service = service
        try await service.deleteMessage(channelURL: channelURL, messageId: messageId)
        try checkOpen()
        applyDeleted(channelURL: channelURL, messageIds: [messageId])
    }
}
