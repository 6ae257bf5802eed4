/// The engine's background tasks, and who listens for the engine's activity.
///
/// A task is tracked from its start to its end, so that closing the manager can
/// cancel what still runs and a test can tell that nothing runs any more; each end
/// (and each handled event) signals the listeners.
struct BackgroundWork {
    private var tasks: [Int: Task<Void, Never>] = [:]
    private var nextTaskId = 0
    private var listeners: [Int: AsyncStream<Void>.Continuation] = [:]
    private var nextListenerId = 0

    var count: Int { tasks.count }

    /// The id the next tracked task will have (it needs it to report its end).
    mutating func reserveId() -> Int {
        defer { nextTaskId += 1 }
        return nextTaskId
    }

    mutating func track(_ task: Task<Void, Never>, id: Int) { tasks[id] = task }

    /// A task ended: it is no longer tracked, and the listeners hear of it.
    mutating func finish(_ id: Int) {
        tasks[id] = nil
        signal()
    }

    mutating func cancelAll() {
        for task in tasks.values { task.cancel() }
        tasks.removeAll()
    }

    /// A stream that yields on each activity, keeping only the newest signal.
    mutating func listen() -> (id: Int, signals: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = nextListenerId
        nextListenerId += 1
        listeners[id] = continuation
        return (id, stream)
    }

    mutating func stopListening(_ id: Int) { listeners.removeValue(forKey: id)?.finish() }

    func signal() {
        for listener in listeners.values { listener.yield() }
    }
}
