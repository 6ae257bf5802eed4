// MARK: - How a page joins the window

/// The pure steps of ``MessageView/insert(_:growing:)`` that look only at the
/// messages, not at the view's state.
extension MessageView {
    /// Merges two arrays sorted by key.
    static func merge(_ left: MessageWindow, _ right: [Message]) -> MessageWindow {
        var merged: [Message] = []
        merged.reserveCapacity(left.count + right.count)
        var (i, j) = (left.startIndex, 0)
        while i < left.endIndex, j < right.count {
            if left[i].sortKey < right[j].sortKey {
                merged.append(left[i])
                i += 1
            } else {
                merged.append(right[j])
                j += 1
            }
        }
        merged.append(contentsOf: left[i...])
        merged.append(contentsOf: right[j...])
        return MessageWindow(merged)
    }

    /// The newest copy of each id of `messages` (of equal ones the later), as the store's
    /// upsert keeps it.
    static func newestCopies(in messages: [Message]) -> [Int64: Message] {
        var copies: [Int64: Message] = [:]
        copies.reserveCapacity(messages.count)
        for message in messages where (copies[message.messageId]?.updatedAt ?? .min) <= message.updatedAt {
            copies[message.messageId] = message
        }
        return copies
    }
}
