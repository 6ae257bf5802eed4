/// The span of keys over which a view holds every matching message, and whether that
/// span reaches either end of its channel.
///
/// Bounds only widen while messages are delivered; they narrow when the view trims its
/// window, and reset with it. Every change goes through a method here, so the rules
/// are in one place.
struct ViewBounds {
    /// The view holds every matching message from here up to ``upper``; `nil` until the first delivery.
    private(set) var lower: MessageKey?
    /// The view holds every matching message up to here; `nil` until the first delivery.
    private(set) var upper: MessageKey?
    /// The view reaches the channel's first message.
    private(set) var reachedOldest = false
    /// The view follows the channel's newest messages: live messages enter it.
    private(set) var reachedNewest = false

    /// Messages down to `key` were delivered (a `.previous` page).
    mutating func extendLower(to key: MessageKey) { lower = min(lower ?? key, key) }

    /// Every matching message from `key` up to where the read began was read, whether it
    /// delivered any or not (a `.previous` read down to a cached range's start). A view
    /// with no upper bound yet holds up to `upperIfUnset`, where that read began: with a
    /// lower bound alone it would cover nothing, and a message dated into the span read
    /// later would enter neither live nor by a fetch, both of which read outward from it.
    mutating func readDown(to key: MessageKey, upperIfUnset: MessageKey) {
        extendLower(to: key)
        if upper == nil { upper = upperIfUnset }
    }

    /// Messages up to `key` were delivered (a `.next` page, or the live edge moved on).
    mutating func extendUpper(to key: MessageKey) { upper = max(upper ?? key, key) }

    /// Nothing older exists: the view holds the channel from its first message. A view
    /// that had no upper bound yet holds up to `upperIfUnset`.
    mutating func reachOldest(upperIfUnset: MessageKey) {
        reachedOldest = true
        readDown(to: .min, upperIfUnset: upperIfUnset)
    }

    /// The view holds the channel up to its newest message, `newest`, and follows it.
    mutating func reachNewest(at newest: MessageKey) {
        reachedNewest = true
        extendUpper(to: newest)
    }

    /// The view can no longer follow the newest messages (its range left the cache, or
    /// a huge gap separates it from them).
    mutating func stopFollowing() { reachedNewest = false }

    /// The window dropped its newest messages: it now ends at `newest`.
    mutating func trimNewer(to newest: MessageKey?) {
        upper = newest
        reachedNewest = false
    }

    /// The window dropped its oldest messages: it now starts at `oldest`.
    mutating func trimOlder(to oldest: MessageKey?) {
        lower = oldest
        reachedOldest = false
    }
}
