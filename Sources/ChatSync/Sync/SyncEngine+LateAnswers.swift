// MARK: - Answers made before what the engine learnt while they travelled

extension SyncEngine {
    /// A page's messages as they stand now: the service made the page before real-time
    /// deletions and edits that reached the engine while it travelled, and the cache may
    /// not have held those messages then (nothing to delete or update). A message deleted
    /// since stays out (it would otherwise come back, and no change log would name it
    /// again); an older version of a message edited since gives way to the newer one.
    func laterThanTheAnswer(_ messages: [Message], in channelURL: String) -> [Message] {
        guard let requests = inFlight[channelURL], !requests.deletedWhileAsked.isEmpty || !requests.editedWhileAsked.isEmpty
        else { return messages }
        let (deleted, edited) = (requests.deletedWhileAsked, requests.editedWhileAsked)
        return messages.compactMap { message in
            if deleted.contains(message.messageId) { return nil }
            if let newer = edited[message.messageId], newer.createdAt == message.createdAt, newer.updatedAt > message.updatedAt {
                return newer
            }
            return message
        }
    }
}
