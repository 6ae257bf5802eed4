/// How many messages the catch-ups of one connection brought a view, which tells a huge
/// gap (see `SyncEngine.catchUp`).
///
/// It lives on the view, not in one catch-up, so that a try cut short (a lost answer)
/// and retried carries the count on: counted per try, a flaky link synced a gap far past
/// `hugeGapThreshold` a page at a time and never reported it. A new connection, or a new
/// window (a viewpoint reset, a dropped history), starts it over.
struct CaughtUpCount {
    private var epoch: Int?
    private var generation = 0
    private var count = 0

    /// What the catch-ups of connection `epoch` brought the view's window `generation`.
    func messages(epoch: Int, generation: Int) -> Int {
        self.epoch == epoch && self.generation == generation ? count : 0
    }

    /// A catch-up of connection `epoch` brought `gained` more messages to window
    /// `generation`; answers what that connection's catch-ups brought it in all.
    mutating func add(_ gained: Int, epoch: Int, generation: Int) -> Int {
        count = messages(epoch: epoch, generation: generation) + gained
        self.epoch = epoch
        self.generation = generation
        return count
    }
}
