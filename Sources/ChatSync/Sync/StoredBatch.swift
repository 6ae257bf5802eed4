/// The batch a sync step stored last, kept so that the fill that reads it next takes its
/// rows from memory instead of reading back what it has just written (the read-back was
/// an eighth of an ingest's time).
///
/// It stands for the cache only while the store's ``ChatStore/changeMark()`` is the one
/// taken in the batch's transaction: any later insert, update or deletion moves it.
struct StoredBatch {
    let channelURL: String
    /// The span the batch is the whole truth for: inside it, the cache holds exactly ``rows``.
    let span: KeyRange
    /// The batch's messages inside ``span``, ascending, as a read of the cache gives them.
    let rows: [Message]
    /// The store's change mark right after the batch was written.
    let mark: Int

    /// Keeps `messages` as the cache holds them inside `span` after a write that left the
    /// store's change mark at `mark`.
    init(channelURL: String, span: KeyRange, messages: [Message], mark: Int) {
        self.channelURL = channelURL
        self.span = span
        self.mark = mark
        // The usual batch is already what a read gives, in order, inside its span: it is
        // then kept as it is, shared, since copying each message cost a third of storing it.
        // A message under another spelling of the channel's URL (equal to Swift, not to
        // SQLite, which compares bytes) was stored under that other key: no read finds it.
        var rows = messages
        if !rows.allSatisfy({ span.admits($0.sortKey) && $0.channelURL.hasSameBytes(as: channelURL) }) {
            rows.removeAll { !span.admits($0.sortKey) || !$0.channelURL.hasSameBytes(as: channelURL) }
        }
        if !rows.allSatisfy(MessageColumns.isAsStored) { rows = rows.map(MessageColumns.asStored) }
        if !rows.indices.dropFirst().allSatisfy({ rows[$0 - 1].sortKey < rows[$0].sortKey }) { rows.sort { $0.sortKey < $1.sortKey } }
        self.rows = rows
    }

    /// Whether the batch is of `channelURL`, compared by bytes as SQLite compares it
    /// (Swift's `==` takes two spellings of one accented letter as equal).
    func holds(_ channelURL: String) -> Bool { self.channelURL.hasSameBytes(as: channelURL) }

    /// The rows a page read of the channel's cache would answer (``ChatStore/page(channelURL:direction:from:inclusive:bound:limit:filter:)``,
    /// ascending), or `nil` when the batch alone cannot tell: the read must start inside
    /// the span, and either end inside it or find `limit` rows before leaving it.
    func page(
        direction: PageDirection, from anchor: MessageKey, inclusive: Bool, bound: MessageKey, limit: Int, filter: MessageFilter
    ) -> [Message]? {
        let older = direction == .older
        // A read with nothing between its start and its far end (a fill's first round,
        // at the edge of the range it read before) answers nothing, whatever is cached.
        let isEmpty = older ? (inclusive ? bound > anchor : bound >= anchor) : (inclusive ? bound < anchor : bound <= anchor)
        guard limit > 0, !isEmpty else { return [] }
        // The first keys the read meets lie inside the span.
        let startsInside: Bool
        if inclusive {
            startsInside = span.admits(anchor)
        } else if older {
            startsInside = span.lower < anchor && anchor <= span.upper
        } else {
            startsInside = span.lower <= anchor && anchor < span.upper
        }
        guard startsInside else { return nil }
        // The read's far end is inside the span: every row it may meet is a row of the batch.
        let endsInside =
            older
            ? (span.lowerInclusive ? span.lower <= bound : span.lower < bound)
            : (span.upperInclusive ? bound <= span.upper : bound < span.upper)
        var found: [Message] = []
        found.reserveCapacity(min(limit, rows.count))
        func take(_ row: Message) -> Bool {
            guard filter.isEmpty || filter.matches(row) else { return true }
            found.append(row)
            return found.count < limit
        }
        if older {
            for row in rows.reversed() where inclusive ? row.sortKey <= anchor : row.sortKey < anchor {
                guard row.sortKey >= bound, take(row) else { break }
            }
            found.reverse()
        } else {
            for row in rows where inclusive ? row.sortKey >= anchor : row.sortKey > anchor {
                guard row.sortKey <= bound, take(row) else { break }
            }
        }
        // Past the span the cache may hold rows the batch does not: only a read that
        // stopped at its limit before getting there is known.
        return endsInside || found.count == limit ? found : nil
    }
}
