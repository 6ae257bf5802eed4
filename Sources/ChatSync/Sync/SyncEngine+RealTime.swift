// MARK: - Real-time events: new, edited and deleted messages, channel changes

extension SyncEngine {
    func applyReceived(_ message: Message) {
        let channelURL = message.channelURL
        guard !channelURL.isEmpty, message.messageId > 0, Self.isPlausibleTime(message.createdAt) else {
            logger.warning("ignoring a real-time message without a channel, an id or a plausible time")
            return
        }
        var received = message.asSynced
        do {
            try resolveArrival(&received)
            if let live = channels[channelURL]?.liveEdge, received.sortKey > live {
                stopAwaitingEchoes(in: channelURL, before: received.sortKey)
                try storeBatch([received], completing: Chunk(channelURL: channelURL, start: live, end: received.sortKey), vouchedEdge: live)
                channels[channelURL]?.liveEdge = received.sortKey
            } else if try channels[channelURL]?.liveEdge != nil || isInCompleteRange(received.sortKey, in: channelURL) {
                // Inside a range the cache holds as complete (a message dated in the past, or
                // at an edit's time): it belongs there, or views read later would skip it.
                try store.upsertMessages([received])
                noteCacheWrites(1)
                followMovedCopies([received], in: channelURL)
                // A page requested before it arrived would take it out again as missing from
                // its span: held, it is put back when that page is stored.
                if inFlight[channelURL]?.liveCapable ?? 0 > 0 { channels[channelURL]?.heldForLive.append(received) }
            } else if inFlight[channelURL]?.liveCapable ?? 0 > 0 {
                channels[channelURL]?.heldForLive.append(received)
            }
            // Otherwise it is not cached: nothing proves the messages before it are, and
            // a row outside every chunk could not be kept up to date. Syncs will bring it.
            noteNewMessage(received)
            if channels[channelURL]?.liveEdge == nil {
                let waiting = views(of: channelURL)
                if waiting.contains(where: \.isFresh) {
                    // The fresh views get this message, and every one after it, once the channel
                    // is proven live from here (see `proveLive`).
                    let since = channels[channelURL]?.freshArrivalsSince
                    channels[channelURL, default: ChannelSyncState()].freshArrivalsSince = min(since ?? received.sortKey, received.sortKey)
                    startCatchUp(channelURL, byArrival: true)
                } else if syncRetriesRanOut, waiting.contains(where: \.reachedNewest) {
                    // Views at the newest messages not caught up when this connection's sync
                    // retries ran out (a flaky link): the message says the link works, so their
                    // catch-up starts again rather than wait for the next reconnect. Only then:
                    // while the chain goes on, its passes catch them up (a reviewer's find).
                    startCatchUp(channelURL, byArrival: true)
                }
            }
            let cached = try isInCompleteRange(received.sortKey, in: channelURL)
            for view in views(of: channelURL) where view.filter.matches(received) {
                if cached, view.covers(received.sortKey, followingLive: try isFollowingLive(view)) {
                    view.insert([received], growing: .next)
                }
                if !received.isSent(by: userId) { view.emit(.newMessage(received)) }
            }
        } catch {
            logger.error("could not store a real-time message: \(error)")
        }
    }

    func applyUpdated(_ arrived: [Message]) {
        // A service may leave the request id out of a real-time edit as of an echo: the
        // user's messages keep the one this device knows, or the edit wrote "" over the
        // cached copy's and the views' (the Outbox model, with such events).
        let messages: [Message]
        do { messages = try withKnownReqIds(arrived) } catch {
            logger.error("could not read the request ids of updated messages: \(error)")
            messages = arrived
        }
        for message in messages {
            // Also when the cache does not hold it: `message(reqId:)` may answer it.
            refreshSyncedLately(message.asSynced)
            do {
                if let index = channels[message.channelURL]?.heldForLive.firstIndex(where: { $0.messageId == message.messageId }),
                    channels[message.channelURL]?.heldForLive[index].createdAt == message.createdAt
                {
                    channels[message.channelURL]?.heldForLive[index] = message.asSynced
                }
                rememberEditForAnswersInFlight(message)
                guard let cached = try store.message(channelURL: message.channelURL, messageId: message.messageId) else {
                    // Not cached, it may still be a listed channel's last message, whose preview follows it.
                    noteChangedMessage(channelURL: message.channelURL, messageId: message.messageId, now: message.asSynced)
                    continue
                }
                guard cached.createdAt == message.createdAt else {
                    logger.warning("ignoring an update that moves message \(message.messageId) in time")
                    continue
                }
                let updated = message.asSynced
                try resolveOwnUpdates([updated], in: message.channelURL)
                try store.upsertMessages([updated])
                refreshViews(message.channelURL, with: [updated])
                noteChangedMessage(channelURL: message.channelURL, messageId: message.messageId, now: updated)
            } catch {
                logger.error("could not apply an update: \(error)")
            }
        }
    }

    func applyDeleted(channelURL: String, messageIds: [Int64]) {
        let deleted = Set(messageIds)
        channels[channelURL]?.heldForLive.removeAll { deleted.contains($0.messageId) }
        noteDeleted(channelURL: channelURL, messageIds: messageIds)
        do {
            try store.write { db in
                for id in messageIds { _ = try ChatStore.deleteMessage(channelURL: channelURL, messageId: id, in: db) }
            }
        } catch {
            logger.error("could not apply a deletion: \(error)")
        }
        for view in views(of: channelURL) { view.remove(messageIds: Set(messageIds)) }
        for id in messageIds { noteChangedMessage(channelURL: channelURL, messageId: id, now: nil) }
    }

    func applyChannelChanged(_ channel: Channel) {
        var channel = channel
        do {
            // A real-time channel event may carry an older last message than one already seen.
            if let cached = try store.channel(channel.channelURL), let known = cached.lastMessage,
                known.sortKey > (channel.lastMessage?.sortKey ?? .min)
            {
                channel.lastMessage = known
            }
            channel = try showingQueuedWrites(channel)
            try store.upsertChannels([channel])
            channelLists.noteChannelChanged(channel.channelURL)
        } catch {
            logger.error("could not store a channel: \(error)")
        }
        reconcileChannelViews(channelURL: channel.channelURL, now: channel)
        for view in views(of: channel.channelURL) { view.emit(.channelUpdated(channel)) }
    }

    func applyChannelRemoved(_ channelURL: String) {
        do {
            try store.deleteChannel(channelURL)
            channelLists.noteRemoved(channelURL)
        } catch {
            logger.error("could not drop a channel: \(error)")
        }
        showChannelGone(channelURL)
    }

    /// A channel deleted or left, dropped from the cache with its history: the engine
    /// forgets what it knew of its sync, its lists drop it and its views are told. The same
    /// for a real-time event and for change logs, so a channel leaves no trace whichever
    /// way the news came.
    func showChannelGone(_ channelURL: String) {
        channels[channelURL] = nil
        forgetSyncedLately(droppedWithHistoryOf: channelURL)
        historyDrops.ended(channelURL)
        // An answered send whose echo never came went with the channel: nothing is left
        // waiting for it, and `message(reqId:)` no longer answers it as synced.
        for (reqId, message) in outbox.awaitingEcho where message.channelURL == channelURL { stopAwaitingEcho(reqId) }
        reconcileChannelViews(channelURL: channelURL, now: nil)
        for view in views(of: channelURL) { view.emit(.channelRemoved(channelURL)) }
    }
}
