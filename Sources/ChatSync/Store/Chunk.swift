/// A range of one channel's timeline that the cache knows to be complete: every
/// message with `start <= (createdAt, messageId) <= end` is cached.
///
/// Ranges merge only when they overlap or share an edge key; two ranges with a
/// space between them stay apart, because nothing is known of what lies there.
struct Chunk: Sendable, Hashable {
    var channelURL: String
    var start: MessageKey
    var end: MessageKey

    init(channelURL: String, start: MessageKey, end: MessageKey) {
        precondition(start <= end, "a chunk's start must not be after its end")
        self.channelURL = channelURL
        self.start = start
        self.end = end
    }

    /// Whether `key` lies inside the range (edges included).
    func contains(_ key: MessageKey) -> Bool { start <= key && key <= end }

    /// Whether the two ranges overlap or touch (share an edge key).
    func overlapsOrTouches(_ other: Chunk) -> Bool {
        other.start <= end && start <= other.end
    }

    /// The smallest range covering both.
    func union(_ other: Chunk) -> Chunk {
        Chunk(channelURL: channelURL, start: Swift.min(start, other.start), end: Swift.max(end, other.end))
    }

    /// Adds `new` to a channel's disjoint ranges, merging every range it overlaps or
    /// touches (it may bridge several). Answers the ranges sorted by start.
    static func merging(_ new: Chunk, into chunks: [Chunk]) -> [Chunk] {
        var merged = new
        var untouched: [Chunk] = []
        for chunk in chunks {
            if chunk.overlapsOrTouches(merged) {
                merged = merged.union(chunk)
            } else {
                untouched.append(chunk)
            }
        }
        // A bridged range may now reach ranges it did not reach before the first unions.
        var changed = true
        while changed {
            changed = false
            untouched.removeAll { chunk in
                guard chunk.overlapsOrTouches(merged) else { return false }
                merged = merged.union(chunk)
                changed = true
                return true
            }
        }
        return (untouched + [merged]).sorted { $0.start < $1.start }
    }
}
