// MARK: - Channel previews: a channel's last message follows its messages

extension SyncEngine {
    /// A new message of a cached channel becomes its `lastMessage`, which moves it in
    /// lists ordered by latest message.
    func noteNewMessage(_ message: Message) {
        do {
            guard var channel = try store.channel(message.channelURL) else {
                // A channel the cache does not know yet: open lists learn of it (and of its
                // new place) from the channel change logs.
                if !channelLists.views.isEmpty { refreshChannelListsSoon() }
                return
            }
            if let last = channel.lastMessage, last.messageId != message.messageId, last.sortKey > message.sortKey { return }
            var latest = message.asSynced
            latest.file?.localPath = nil
            guard channel.lastMessage != latest else { return }
            channel.lastMessage = latest
            try store.upsertChannels([channel])
            channelLists.noteLastMessageChanged(channel.channelURL)
            reconcileChannelViews(channelURL: channel.channelURL, now: channel)
        } catch {
            logger.error("could not note the last message of \(message.channelURL): \(error)")
        }
    }

    /// An edited or deleted message that was a channel's last one changes the channel.
    ///
    /// After a deletion the channel's last message is the newest one left, which the cache
    /// knows only when a complete range reaches from its newest message to the deleted
    /// one: otherwise that message (or none) stands in until the channel change logs,
    /// asked for at once when a list is open, bring the service's. Meanwhile the channel
    /// may sort lower, or leave a list without empty channels, and come back with them.
    func noteChangedMessage(channelURL: String, messageId: Int64, now message: Message?) {
        do {
            guard var channel = try store.channel(channelURL), let gone = channel.lastMessage, gone.messageId == messageId else { return }
            if let message {
                guard message.createdAt == gone.createdAt else { return }
                channel.lastMessage = message
            } else {
                let newest = try store.newestMessage(channelURL: channelURL)
                channel.lastMessage = newest
                let ranges = try chunks(of: channelURL)
                let known = newest.map { newest in ranges.contains { $0.contains(newest.sortKey) && $0.contains(gone.sortKey) } } ?? false
                if !known {
                    // A list opened later applies them before its first page from the service.
                    channelLists.changeLogsAreDue()
                    if !channelLists.views.isEmpty { refreshChannelListsSoon() }
                }
            }
            try store.upsertChannels([channel])
            channelLists.noteLastMessageChanged(channelURL)
            reconcileChannelViews(channelURL: channelURL, now: channel)
        } catch {
            logger.error("could not update the last message of \(channelURL): \(error)")
        }
    }

    /// `answered` (channels the service answered for a request made at `mark`), each with
    /// the cached last message where the cache took a new one while the request was out
    /// (a real-time message, its edit or deletion, the change logs): the answer knows less,
    /// and would move the channel back. Only then: a last message the cache knew before
    /// the request may have been deleted since, which the answer knows.
    func keepingNewerLastMessages(_ answered: [Channel], since mark: Int) throws -> [Channel] {
        try answered.map { channel in
            guard channelLists.lastMessageChanged(channel.channelURL, since: mark), let cached = try store.channel(channel.channelURL)
            else { return channel }
            // The cache's is newer (a later message, or a later edit of the same one), or the
            // answer's was deleted meanwhile (the cache's stands in for it).
            let (known, answer) = (cached.lastMessage, channel.lastMessage)
            let newer = (known?.sortKey ?? .min) > (answer?.sortKey ?? .min)
            let edited = known != nil && known?.messageId == answer?.messageId && (known?.updatedAt ?? 0) > (answer?.updatedAt ?? 0)
            let answerDeleted = answer.map { outbox.deletedLately.contains(channelURL: $0.channelURL, messageId: $0.messageId) } ?? false
            guard newer || edited || answerDeleted else { return channel }
            var kept = channel
            kept.lastMessage = cached.lastMessage
            return kept
        }
    }
}
