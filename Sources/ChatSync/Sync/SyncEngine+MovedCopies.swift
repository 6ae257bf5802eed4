// MARK: - Copies of a message dated elsewhere

extension SyncEngine {
    /// Views that hold one of `messages` at another place in time than the cache now holds
    /// it take the cache's copy: at its place when they reach that far, otherwise they let
    /// it go (a fetch brings it back where it belongs).
    ///
    /// A message never moves in time, but a service can send a copy dated elsewhere, and
    /// the store keeps the newer copy of an id wherever it is dated. A view that showed the
    /// first copy and did not reach the second's place kept it, away from the cache: the
    /// message's edits, which never move a message, then reached the cache and not the
    /// view. Found by the hostile-answer generator (seed 7702, under load).
    ///
    /// Costs a set look-up per message and view, and for a message the view holds, a scan
    /// for its place; the cache is read only for an id a view holds at another place than
    /// the message's, which no well-formed service causes. A copy above the view's newest
    /// edge is left to the live paths, which bring the view up to it in order.
    func followMovedCopies(_ messages: some Collection<Message>, in channelURL: String) {
        let views = views(of: channelURL)
        guard !views.isEmpty else { return }
        var cachedCopies: [Int64: Message?] = [:]
        for view in views {
            var stale: Set<Int64> = []
            var replacements: [Message] = []
            for message in messages {
                // Held where this copy is dated: the view took it, and the store took it too
                // (both keep the newer copy of an id, wherever it is dated).
                guard let held = view.key(ofMessage: message.messageId), held != message.sortKey else { continue }
                let cached: Message?
                if let known = cachedCopies[message.messageId] {
                    cached = known
                } else {
                    // A read that fails tells nothing: the view keeps what it shows.
                    let read: Message?
                    do { read = try store.message(channelURL: channelURL, messageId: message.messageId) } catch { continue }
                    cached = read
                    cachedCopies[message.messageId] = .some(read)
                }
                guard cached?.sortKey != held else { continue }
                stale.insert(message.messageId)
                if let cached, let upper = view.upperBound, cached.sortKey <= upper, view.filter.matches(cached),
                    view.covers(cached.sortKey, followingLive: false), (try? isInCompleteRange(cached.sortKey, in: channelURL)) == true
                {
                    replacements.append(cached)
                }
            }
            view.remove(messageIds: stale)
            if !replacements.isEmpty { view.insert(replacements, growing: .next) }
        }
    }
}
