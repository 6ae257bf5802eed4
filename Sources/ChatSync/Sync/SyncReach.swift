/// How far the reconnect sync of one connection has got: the channels whose change logs
/// were applied, the channels proven live, and where each view at the newest messages of
/// a channel not yet live reaches in the cache. A pass of the sync during which any of
/// these moved forward made progress, even when it ended incomplete (see
/// `SyncEngine.runSyncPass`).
///
/// Only forward moves count, and each takes a stored answer: a channel is applied and
/// proven live once until its history is dropped (a clear, a refused token, its removal,
/// an eviction: each comes from outside the sync), and a view of a channel not live yet
/// reaches forward only as the sync stores pages (real-time messages extend only live
/// channels, which are left out for that reason: a busy channel must not keep another
/// channel's failing retries going). So a service that answers without moving the sync
/// on cannot keep its retries going.
struct SyncReach {
    var changeLogsApplied: Set<String> = []
    var live: Set<String> = []
    /// By view id, for channels not live: the end of the cached range holding the view's newest edge.
    var viewReach: [Int: MessageKey] = [:]

    /// Whether `later` got further than this anywhere.
    func isPassed(by later: SyncReach) -> Bool {
        !later.changeLogsApplied.isSubset(of: changeLogsApplied) || !later.live.isSubset(of: live)
            || later.viewReach.contains { id, reach in viewReach[id].map { reach > $0 } ?? false }
    }
}

extension SyncEngine {
    /// The reconnect sync's reach now, in the current connection.
    func syncReach() -> SyncReach {
        var reach = SyncReach()
        for (channelURL, state) in channels {
            if state.changeLogsEpoch == epoch { reach.changeLogsApplied.insert(channelURL) }
            if state.liveEdge != nil { reach.live.insert(channelURL) }
        }
        for view in views.values where view.reachedNewest && channels[view.channelURL]?.liveEdge == nil {
            let edge = view.upperBound ?? view.viewpointKey
            if let chunk = (try? chunks(of: view.channelURL))?.first(where: { $0.contains(edge) }) { reach.viewReach[view.id] = chunk.end }
        }
        return reach
    }
}
