// MARK: - Channel previews: a channel's last message follows its messages

extension SyncEngine {
    /// A new message of a cached channel becomes its `lastMessage`, which moves it in
    /// lists ordered by latest message. An older copy of the preview's own message (an
    /// echo, or a page, made before an edit the preview shows) does not.
    ///
    /// - Parameter learningOfNewChannels: whether a message of a channel the cache does
    ///   not hold makes open lists ask the channel change logs for it (a real-time one).
    func noteNewMessage(_ message: Message, learningOfNewChannels: Bool = true) {
        do {
            guard var channel = try store.channel(message.channelURL) else {
                // A channel the cache does not know yet: open lists learn of it (and of its
                // new place) from the channel change logs.
                if learningOfNewChannels, !channelLists.views.isEmpty { refreshChannelListsSoon() }
                return
            }
            if let last = channel.lastMessage {
                if last.messageId != message.messageId, last.sortKey > message.sortKey { return }
                if last.messageId == message.messageId, last.updatedAt > message.updatedAt { return }
            }
            var latest = message.asSynced
            latest.file?.localPath = nil
            let before = channel.lastMessage
            channel.lastMessage = latest
            channel = try showingQueuedWrites(channel)
            guard channel.lastMessage != before else { return }
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
    /// one: otherwise that message (or none) stands in until the service's answer (see
    /// ``askForThePreviewUnlessKnown(channelURL:standIn:gone:)``). Meanwhile the channel
    /// may sort lower, or leave a list without empty channels, and come back with them.
    func noteChangedMessage(channelURL: String, messageId: Int64, now message: Message?) {
        do {
            guard var channel = try store.channel(channelURL), let gone = channel.lastMessage, gone.messageId == messageId else { return }
            if let message {
                guard message.createdAt == gone.createdAt else { return }
                channel.lastMessage = message
                channel = try showingQueuedWrites(channel)
            } else {
                let newest = try newestShownMessage(channelURL: channelURL)
                channel.lastMessage = newest
                try askForThePreviewUnlessKnown(channelURL: channelURL, standIn: newest, gone: gone)
            }
            try store.upsertChannels([channel])
            channelLists.noteLastMessageChanged(channelURL)
            reconcileChannelViews(channelURL: channelURL, now: channel)
        } catch {
            logger.error("could not update the last message of \(channelURL): \(error)")
        }
    }

    /// `standIn` shows in place of the deleted last message `gone` (`nil`: not known): the
    /// service is asked unless a complete range proves that nothing lies between them.
    private func askForThePreviewUnlessKnown(channelURL: String, standIn: Message?, gone: Message?) throws {
        if let standIn, let gone {
            let ranges = try chunks(of: channelURL)
            if ranges.contains(where: { $0.contains(standIn.sortKey) && $0.contains(gone.sortKey) }) { return }
        }
        // A list opened later applies the change logs before its first page from the service.
        channelLists.changeLogsAreDue()
        if !channelLists.views.isEmpty { refreshChannelListsSoon() }
        // Change logs cannot tell a deletion made before their token (one taken after a
        // clear or a refused token), and a stale real-time message may have stood in: the
        // channel's newest message, asked for, is the service's word on its preview.
        if isOnline, channelLists.startPreviewAsk(channelURL) {
            runInBackground { engine in await engine.askForThePreview(of: channelURL) }
        }
    }

    /// Replaces the channel's preview with its newest message as the service answers it
    /// (the user's queued writes laid over), unless the preview or the channel changed
    /// meanwhile: a later word (a new message, a channel event, another deletion). One ask
    /// per channel is out at a time; one asked for meanwhile follows it.
    private func askForThePreview(of channelURL: String) async {
        repeat {
            await askOnceForThePreview(of: channelURL)
        } while !isClosed && channelLists.endPreviewAsk(channelURL)
    }

    private func askOnceForThePreview(of channelURL: String) async {
        let mark = channelLists.changeMark
        // One message more than those whose deletion is queued: the newest left is among them.
        let query = MessageQuery(
            channelURL: channelURL, timestamp: .max, prevLimit: pendingWrites.deletionCount(channelURL: channelURL) + 1, nextLimit: 0)
        do {
            guard let page = try await requestUnlessTransient({ try await $0.fetchMessages(query) }), !isClosed,
                !channelLists.lastMessageChanged(channelURL, since: mark), var channel = try store.channel(channelURL)
            else { return }
            // Deleted lately (by this device, whose deletion may have landed after the answer
            // was made): not the preview whatever the answer says.
            var newest = page.messages
                .filter { $0.channelURL == channelURL && $0.messageId > 0 }
                .filter { !outbox.deletedLately.contains(channelURL: channelURL, messageId: $0.messageId) }
                .sorted { $0.sortKey > $1.sortKey }
                .lazy.compactMap { self.pendingWrites.overlaid($0.asSynced) }.first
            newest?.file?.localPath = nil
            guard channel.lastMessage != newest else { return }
            channel.lastMessage = newest
            try store.upsertChannels([channel])
            channelLists.noteLastMessageChanged(channelURL)
            reconcileChannelViews(channelURL: channelURL, now: channel)
        } catch {
            logger.debug("could not ask for the last message of \(channelURL): \(error)")
        }
    }

    /// The user's queued deletion of a message landed (its answer came, or the service's
    /// event first), called while the cache still holds the message. The channel's preview
    /// has shown a stand-in since the deletion was queued, and pages or change logs answered
    /// meanwhile still named the message (the service had not deleted it yet), so the
    /// stand-in is checked again now that the service's last message is the one left. A
    /// message the cache no longer holds (a clear dropped it) cannot be placed, so the
    /// service is asked.
    func ownDeletionLanded(channelURL: String, messageId: Int64) {
        do {
            guard let channel = try store.channel(channelURL) else { return }
            // An ask answered before the deletion landed may name the message again now
            // that no queued deletion hides it: it yields to this word.
            channelLists.noteLastMessageChanged(channelURL)
            guard let deleted = try confirmedCopy(channelURL: channelURL, messageId: messageId) else {
                return try askForThePreviewUnlessKnown(channelURL: channelURL, standIn: nil, gone: nil)
            }
            guard (channel.lastMessage?.sortKey ?? .min) < deleted.sortKey else { return }
            try askForThePreviewUnlessKnown(channelURL: channelURL, standIn: channel.lastMessage, gone: deleted)
        } catch {
            logger.error("could not check the last message of \(channelURL): \(error)")
        }
    }

    /// At open: the previews of channels with writes queued show them, also where the app
    /// was killed between storing a write and updating its channel (or queued it with a
    /// version that did not lay writes over previews).
    func showQueuedWritesInPreviews() {
        for channelURL in pendingWrites.channelURLs {
            do {
                guard let channel = try store.channel(channelURL) else { continue }
                let shown = try showingQueuedWrites(channel)
                if shown.lastMessage != channel.lastMessage { try store.upsertChannels([shown]) }
            } catch {
                logger.error("could not show the queued writes of \(channelURL) in its last message: \(error)")
            }
        }
    }

    /// A write of the channel's that the cache cannot undo (its message is no longer held)
    /// left it: a preview that showed the write is replaced by the service's, if the channel
    /// is still cached.
    func askForThePreviewOfChannelStillCached(_ channelURL: String) {
        do {
            guard try store.channel(channelURL) != nil else { return }
            try askForThePreviewUnlessKnown(channelURL: channelURL, standIn: nil, gone: nil)
        } catch {
            logger.error("could not check the last message of \(channelURL): \(error)")
        }
    }

    /// The channel as the user sees it: its last message with the user's queued writes
    /// laid over, as every collection shows the message (API §4.6, at once and offline):
    /// a queued edit's text, or, while the message's deletion is queued, the newest cached
    /// message left (or none) standing in, as after a deletion by the service. Every
    /// channel the cache stores passes here, so an answer, an event or change logs that
    /// still carry the message as the service holds it do not undo the user's write.
    func showingQueuedWrites(_ channel: Channel) throws -> Channel {
        guard !pendingWrites.isEmpty, let last = channel.lastMessage else { return channel }
        var shown = channel
        if let overlaid = pendingWrites.overlaid(last) {
            shown.lastMessage = overlaid
        } else {
            shown.lastMessage = try newestShownMessage(channelURL: channel.channelURL)
        }
        return shown
    }

    /// The channel's newest cached message that is not being deleted, with its queued
    /// edits laid over.
    func newestShownMessage(channelURL: String) throws -> Message? {
        // A page just long enough to pass every message of the channel whose deletion is queued.
        let deletions = pendingWrites.deletionCount(channelURL: channelURL)
        let newest = try store.page(channelURL: channelURL, direction: .older, from: .max, inclusive: true, limit: deletions + 1)
        return newest.reversed().lazy.compactMap { self.pendingWrites.overlaid($0) }.first
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
            let knownDeleted = known.map { outbox.deletedLately.contains(channelURL: $0.channelURL, messageId: $0.messageId) } ?? false
            guard !knownDeleted, newer || edited || answerDeleted else { return channel }
            var kept = channel
            kept.lastMessage = cached.lastMessage
            return kept
        }
    }
}
