/// Counts, per channel, the times the cache dropped what it held of a channel: its
/// change-log token was refused, it was deleted or left, or the whole cache was cleared.
///
/// A page asked for before such a drop describes a history the cache no longer builds
/// on: stored after it, it would bring back messages that were deleted meanwhile, which
/// no change log from the new token names (they were deleted before it), or rows of a
/// channel the user left. The engine takes a channel's ``mark(_:)`` when it asks for a
/// page and stores the answer only if the mark is unchanged.
///
/// The ends of channels (deleted, or left) are counted apart too: an answer to a send
/// that was out when its channel ended names a message that went with the channel, which
/// no later news of the channel's end takes back (``endMark(_:)``).
struct HistoryDrops {
    private var everything = 0
    private var byChannel: [String: Int] = [:]
    private var ends: [String: Int] = [:]

    /// Changes whenever the channel's cached history is dropped (both counts only grow).
    func mark(_ channelURL: String) -> Int { everything + byChannel[channelURL, default: 0] }

    /// The channel's cached history was dropped.
    mutating func dropped(_ channelURL: String) { byChannel[channelURL, default: 0] += 1 }

    /// Changes whenever the channel ends for the user (only grows).
    func endMark(_ channelURL: String) -> Int { ends[channelURL, default: 0] }

    /// The channel was deleted or the user left it: its history went with it.
    mutating func ended(_ channelURL: String) {
        dropped(channelURL)
        ends[channelURL, default: 0] += 1
    }

    /// The whole cache was dropped.
    mutating func droppedEverything() { everything += 1 }
}
