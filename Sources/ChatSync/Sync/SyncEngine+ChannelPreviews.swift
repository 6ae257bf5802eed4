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

    /// Whether change logs asked for at `mark` name a channel the cache has taken from the
    /// service since (a channel event, other change logs), or dropped since (deleted, or
    /// left): merged, one side of that channel would be lost.
    func knowsLessThanTheCache(_ logs: ChannelChangeLogs, since mark: Int) -> Bool {
        logs.updated.contains {
            channelLists.wasRemoved($0.channelURL, since: mark) || channelLists.channelChanged($0.channelURL, since: mark)
        }
            || logs.deletedChannelURLs.contains { channelLists.channelChanged($0, since: mark) }
    }

    /// `answered` (channels the service answered for a request made at `mark`), with what
    /// the cache learnt while the request was out, which the answer may not know:
    ///
    /// - a channel removed from the cache (deleted, or left) is left out: the answer would
    ///   bring it back, and the removal was the last word on it.
    /// - a channel the cache took from the service (a channel event, the change logs) is
    ///   kept as cached, whole: the events and change logs that brought it are spent, so
    ///   nothing later would correct an older answer (an older name would put the channel
    ///   back in an older place of a list by name; an older last message would bring back
    ///   one deleted meanwhile whose deletion event a reconnect cut off). Anything the
    ///   service changes after the cached copy comes as an event or in the next change logs.
    /// - a channel whose last message changed in the cache (a real-time message, its edit
    ///   or deletion) keeps the cached last message when it is newer (a later message, or
    ///   a later edit of the same one) or the answer's was deleted meanwhile. Otherwise the
    ///   answer's is the newer word: a deletion's stand-in may be older than what the
    ///   service has left.
    ///
    /// When nothing changed since `mark`, the answer stands: a last message the cache knew
    /// before the request may have been deleted since, which the answer knows. (The first
    /// rule was found by the channel-list generator's pages held across changes.)
    func keepingWhatTheCacheLearntSince(_ answered: [Channel], since mark: Int) throws -> [Channel] {
        try answered.compactMap { channel in
            if channelLists.wasRemoved(channel.channelURL, since: mark) { return nil }
            guard channelLists.lastMessageChanged(channel.channelURL, since: mark), let cached = try store.channel(channel.channelURL)
            else { return channel }
            if channelLists.channelChanged(channel.channelURL, since: mark) { return cached }
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
