// MARK: - Answers made before what the engine learnt while they travelled

extension SyncEngine {
    /// A page's messages as they stand now: the service made the page before deletions
    /// and edits that reached the engine while it travelled (in real time, or in the
    /// change logs of a return), and the cache may not have held those messages then
    /// (nothing to delete or update). A message deleted since stays out (it would
    /// otherwise come back, and no change log would name it again); an older version of a
    /// message edited since gives way to the newer one.
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

    /// An edit learnt while requests of its channel are out (in real time or from change
    /// logs): their answers, made before it, may carry an older copy, which yields to this
    /// one. The newest edit of each message is kept.
    func rememberEditForAnswersInFlight(_ message: Message) {
        guard let requests = inFlight[message.channelURL],
            requests.editedWhileAsked[message.messageId]?.updatedAt ?? .min <= message.updatedAt
        else { return }
        inFlight[message.channelURL]?.editedWhileAsked[message.messageId] = message.asSynced
    }

    /// Deletions learnt while requests of their channel are out (in real time, from change
    /// logs, look-ups, the user's own deletion landing, or a page's authoritative span):
    /// those answers, made before, may still name them.
    func rememberDeletionsForAnswersInFlight(_ messageIds: some Sequence<Int64>, in channelURL: String) {
        inFlight[channelURL]?.deletedWhileAsked.formUnion(messageIds)
    }
}
