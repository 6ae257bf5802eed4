// MARK: - Runs of new messages that arrived together

extension SyncEngine {
    /// Applies new messages of one channel that were waiting together, in their order.
    /// A stretch of them that extends the live edge is stored in one transaction and
    /// reaches each view as one insertion; the others are applied one by one, exactly as
    /// a message arriving alone is. Per message, what a lone arrival does still happens in
    /// the same order: its outbox entry or awaited echo is resolved, echoes it overtook
    /// stop being awaited, and each view that shows it gets `newMessage`.
    func applyReceived(_ run: [Message]) {
        var start = run.startIndex
        while start < run.endIndex {
            let count = liveStretch(run[start...])
            if count > 1 {
                extendLive(run[start..<start + count])
                start += count
            } else {
                applyReceived(run[start])
                start += 1
            }
        }
    }

    /// How many messages from the start of `messages` extend the channel's live edge one
    /// after another: each plausible, newer than the edge and than the one before it.
    private func liveStretch(_ messages: ArraySlice<Message>) -> Int {
        guard let channelURL = messages.first?.channelURL, var newest = channels[channelURL]?.liveEdge else { return 0 }
        var count = 0
        for message in messages {
            guard message.messageId > 0, Self.isPlausibleTime(message.createdAt), message.sortKey > newest else { break }
            newest = message.sortKey
            count += 1
        }
        return count
    }

    /// Stores a stretch that extends the live edge (see ``liveStretch(_:)``) with its range
    /// in one transaction, and shows it.
    private func extendLive(_ stretch: ArraySlice<Message>) {
        let channelURL = stretch[stretch.startIndex].channelURL
        guard let live = channels[channelURL]?.liveEdge else { return }
        var received: [Message] = []
        received.reserveCapacity(stretch.count)
        do {
            for message in stretch {
                var message = message.asSynced
                try resolveArrival(&message)
                stopAwaitingEchoes(in: channelURL, before: message.sortKey)
                received.append(message)
            }
            let newest = received[received.count - 1]
            // The range the stretch landed in holds all of it (nil only if it proved nothing).
            let landed = try storeBatch(
                received, completing: Chunk(channelURL: channelURL, start: live, end: newest.sortKey), vouchedEdge: live)
            channels[channelURL]?.liveEdge = newest.sortKey
            noteNewMessage(newest)
            liveStretchesApplied += 1
            for view in views(of: channelURL) {
                let matching = received.filter { view.filter.matches($0) }
                guard !matching.isEmpty else { continue }
                // Judged on the view as it was before the stretch, as each message alone
                // would be: a view that followed the live edge follows it to the newest.
                let following = try isFollowingLive(view)
                let shown = matching.filter {
                    landed?.contains($0.sortKey) == true && view.covers($0.sortKey, followingLive: following)
                }
                if !shown.isEmpty { view.insert(shown, growing: .next) }
                for message in matching where !message.isSent(by: userId) { view.emit(.newMessage(message)) }
            }
        } catch {
            logger.error("could not store \(stretch.count) real-time messages: \(error)")
        }
    }
}
