/// How far the reconnect sync of one connection has got: the channels whose change logs
/// it applied, the channels it proved live, and where each view at the newest messages
/// reaches in the cache. A pass of the sync that moved any of these forward made
/// progress, even when it ended incomplete (see `SyncEngine.runSyncPass`).
///
/// Only forward moves count, and each is bounded (a channel is applied and proven once
/// per connection; a view reaches forward only as far as the service's newest message),
/// so a service that answers without moving the sync on cannot keep its retries going.
struct SyncReach {
    var changeLogsApplied: Set<String> = []
    var live: Set<String> = []
    /// By view id: the end of the cached range holding the view's newest edge.
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
        for view in views.values where view.reachedNewest {
            let edge = view.upperBound ?? view.viewpointKey
            if let chunk = (try? chunks(of: view.channelURL))?.first(where: { $0.contains(edge) }) { reach.viewReach[view.id] = chunk.end }
        }
        return reach
    }
}
