/// The messages a view shows, in order, in a ring: a page joins either end, and a trim
/// leaves either end, without moving the rest.
///
/// A contiguous list moved its whole window on every page that joined at the front (a
/// scroll back, the common case): a thousand messages of 272 bytes per page, a tenth of an
/// ingest's time in the engine. Here a page costs what it brings.
struct MessageWindow: RandomAccessCollection, MutableCollection {
    /// The ring; its size is 0 or a power of two. Free slots hold ``blank``.
    private var ring: [Message] = []
    /// Where the first message lies in ``ring``.
    private var head = 0
    /// How many messages the window holds.
    private(set) var count = 0

    /// An empty window.
    init() {}

    /// A window holding `messages`, in their order.
    init(_ messages: some Collection<Message>) {
        append(contentsOf: messages)
    }

    /// Positions count from the first message, 0, whatever its place in the ring.
    var startIndex: Int { 0 }
    /// One past the last message.
    var endIndex: Int { count }
    /// The position after `index`.
    func index(after index: Int) -> Int { index + 1 }
    /// The position before `index`.
    func index(before index: Int) -> Int { index - 1 }

    /// The message at `position` (0 is the first), read or replaced in place.
    subscript(position: Int) -> Message {
        get {
            precondition(position >= 0 && position < count, "index out of range")
            return ring[slot(position)]
        }
        set {
            precondition(position >= 0 && position < count, "index out of range")
            ring[slot(position)] = newValue
        }
    }

    /// Puts `messages` before the first message, in their order.
    mutating func prepend(contentsOf messages: some Collection<Message>) {
        guard !messages.isEmpty else { return }
        reserve(count + messages.count)
        head = (head - messages.count) & (ring.count - 1)
        count += messages.count
        for (offset, message) in messages.enumerated() { ring[slot(offset)] = message }
    }

    /// Puts `messages` after the last message, in their order.
    mutating func append(contentsOf messages: some Collection<Message>) {
        guard !messages.isEmpty else { return }
        reserve(count + messages.count)
        for message in messages {
            ring[slot(count)] = message
            count += 1
        }
    }

    /// Removes the first `k` messages; answers them.
    @discardableResult
    mutating func removeFirst(_ k: Int) -> [Message] {
        precondition(k >= 0 && k <= count, "cannot remove more messages than the window holds")
        let removed = takeOut(0..<k)
        if k > 0 { head = (head + k) & (ring.count - 1) }
        count -= k
        return removed
    }

    /// Removes the last `k` messages; answers them.
    @discardableResult
    mutating func removeLast(_ k: Int) -> [Message] {
        precondition(k >= 0 && k <= count, "cannot remove more messages than the window holds")
        let removed = takeOut((count - k)..<count)
        count -= k
        return removed
    }

    /// Moves the messages at `positions` out of the ring, leaving blanks: swapped rather
    /// than copied, so that no string is retained for the removal and released again.
    private mutating func takeOut(_ positions: Range<Int>) -> [Message] {
        var removed: [Message] = []
        removed.reserveCapacity(positions.count)
        for position in positions {
            var message = Self.blank
            swap(&message, &ring[slot(position)])
            removed.append(message)
        }
        return removed
    }

    /// Removes the messages for which `shouldBeRemoved` holds, keeping the order of the rest.
    mutating func removeAll(where shouldBeRemoved: (Message) throws -> Bool) rethrows {
        var kept: [Message] = []
        kept.reserveCapacity(count)
        for message in self where try !shouldBeRemoved(message) { kept.append(message) }
        guard kept.count != count else { return }
        self = MessageWindow(kept)
    }

    /// Empties the window and lets its ring go.
    mutating func removeAll() { self = MessageWindow() }

    /// Where the message at `position` lies in the ring.
    private func slot(_ position: Int) -> Int { (head + position) & (ring.count - 1) }

    /// Grows the ring to hold `needed` messages, laid out from its start again.
    private mutating func reserve(_ needed: Int) {
        guard needed > ring.count else { return }
        var size = Swift.max(ring.count, 16)
        while size < needed { size *= 2 }
        var grown: [Message] = []
        grown.reserveCapacity(size)
        grown.append(contentsOf: self)
        grown.append(contentsOf: repeatElement(Self.blank, count: size - count))
        ring = grown
        head = 0
    }

    /// What a free slot holds: a message with nothing on the heap.
    private static let blank = Message(messageId: 0, channelURL: "", senderId: "", kind: .text, text: "", createdAt: 0)
}
