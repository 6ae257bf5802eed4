/// When the cache is due for trimming to ``SyncManagerOptions/messageStoreCapacity``.
///
/// Counting a large cache costs a scan, so the engine counts only when a trim runs and
/// in between adds up what it writes (an upper bound: an edit counts as a new row). A
/// trim becomes due once `slack` messages were written since the last count and the
/// cache may be over its capacity: the count is paid once per `slack` writes, and the
/// cache holds at most `capacity + slack` messages beyond what open views protect.
struct CacheTrimming {
    /// The most messages to keep; `nil`: unlimited.
    let capacity: Int?
    /// Messages cached at the last count, after that trim's evictions; `nil` before the first.
    private(set) var counted: Int?
    /// Messages written since that count.
    private(set) var written = 0
    /// Messages written while a trim runs: they count towards the next one.
    private var writtenDuringRun = 0
    /// The cache was cleared while a trim ran.
    private var clearedDuringRun = false
    /// A view closed while a trim ran: what it protected may go once the trim ends.
    private var rerunAfterRun = false
    /// A trim is running: what is written meanwhile counts towards the next one.
    private(set) var isRunning = false
    /// Trims begun so far: every eighth (the first included) counts the cache exactly.
    private var runs = 0

    /// Whether the running trim counts the cache rather than trusting ``estimate``.
    var countsExactly: Bool { counted == nil || (runs - 1) % 8 == 0 }

    /// The most messages the cache can hold now: the last count plus what was written
    /// since (an edit of a cached message counts too, so this never undercounts).
    var estimate: Int { (counted ?? 0) + written }

    init(capacity: Int?) { self.capacity = capacity }

    /// How far past the capacity the cache may grow before a trim: a tenth of it.
    var slack: Int { max((capacity ?? 0) / 10, 1) }

    /// Messages were written; answers whether a trim should start now.
    mutating func noteWritten(_ count: Int) -> Bool {
        guard let capacity, count > 0 else { return false }
        if isRunning {
            writtenDuringRun += count  // after the running trim read its total
            return false
        }
        written += count
        // Never counted yet (the first count failed): the next trim counts.
        guard let counted else { return written >= slack && begin() }
        return written >= slack && counted + written > capacity && begin()
    }

    /// The cache may hold more than its capacity (what open views protected at the last
    /// trim, or what was written since).
    var mayBeOver: Bool {
        guard let capacity, let counted else { return false }
        return counted + written > capacity
    }

    /// Marks a trim as running; answers `false` when one runs already (or nothing is capped).
    mutating func begin() -> Bool {
        guard capacity != nil, !isRunning else { return false }
        isRunning = true
        runs += 1
        return true
    }

    /// The trim ended with `remaining` messages cached (`nil`: it could not count);
    /// answers whether another is due at once (enough was written while it ran).
    mutating func finish(remaining: Int?) -> Bool {
        isRunning = false
        let rerun = rerunAfterRun
        defer {
            clearedDuringRun = false
            writtenDuringRun = 0
            rerunAfterRun = false
        }
        guard let capacity, let remaining else {
            written += writtenDuringRun  // what the failed trim saw counts towards the next
            return false
        }
        // A cache cleared meanwhile holds only what was written since.
        counted = clearedDuringRun ? 0 : remaining
        written = writtenDuringRun
        return (rerun || written >= slack) && counted! + written > capacity
    }

    /// A view closed: if a trim runs, it may have passed over that view's channel, so
    /// another follows it when the cache is still over its capacity.
    mutating func viewClosed() -> Bool {
        guard capacity != nil else { return false }
        if isRunning {
            rerunAfterRun = true
            return false
        }
        return mayBeOver && begin()
    }

    /// The cache was emptied: nothing is cached, and a running trim's total is stale.
    mutating func cacheCleared() {
        guard capacity != nil else { return }
        counted = 0
        written = 0
        if isRunning { clearedDuringRun = true }
    }
}
