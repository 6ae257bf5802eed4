/// The range of keys a page proves complete, read from the query that asked for it and
/// the service's `hasPrev`/`hasNext`.
struct PageSpan {
    /// The oldest key the page vouches for: `.min` when nothing older exists.
    let start: MessageKey
    /// The newest key the page vouches for.
    let end: MessageKey
    /// Nothing newer than ``end`` exists on the service.
    let reachesNewest: Bool
    /// The span the page is the truth for (the anchor side open when the query was
    /// exclusive): cached rows inside it that the page lacks no longer exist.
    let authoritative: KeyRange

    /// - Parameter messages: the page's messages, sanitized (ascending, one channel).
    init(page: MessagePage, messages: [Message], query: MessageQuery) {
        let anchor = MessageKey(createdAt: query.timestamp, messageId: query.anchorMessageId ?? .max)
        let start: MessageKey
        if query.prevLimit > 0 {
            start = page.hasPrev ? (messages.first { $0.sortKey <= anchor }?.sortKey ?? anchor) : .min
        } else {
            start = anchor
        }
        var end = anchor
        var reachesNewest = false
        if query.nextLimit > 0 {
            if page.hasNext, let last = messages.last, last.sortKey > anchor {
                end = last.sortKey
            } else {
                end = max(messages.last?.sortKey ?? start, start)
                reachesNewest = !page.hasNext
            }
        }
        self.start = start
        self.end = end
        self.reachesNewest = reachesNewest
        authoritative = KeyRange(
            lower: query.prevLimit > 0 ? start : anchor, lowerInclusive: query.prevLimit > 0 || query.inclusive,
            upper: query.nextLimit > 0 ? end : anchor, upperInclusive: query.nextLimit > 0 || query.inclusive)
    }
}
