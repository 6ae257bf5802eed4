/// How far the reconnect sync of one connection has got: the channels whose change logs
/// were applied, how many pages of change logs were, the channels proven live, how far the
/// proof of each channel paged forward from its fresh views' first arrival, and where
/// each view at the newest messages that does not follow the live edge reaches in the
/// cache. A pass of the sync during which any of these moved forward made progress, even
/// when it ended incomplete (see `SyncEngine.runSyncPass`).
///
/// Only forward moves count, and each takes a stored answer: a channel is applied and
/// proven live once until its history is dropped (a clear, a refused token, its removal,
/// an eviction: each comes from outside the sync); a page of change logs moves a stored
/// token on, and a channel's logs are read until applied whole once per connection, so
/// a busy channel does not add pages for ever; and a view that does not follow the live
/// edge reaches forward only as the sync stores pages (real-time messages extend only the
/// live range, whose views are left out for that reason: a busy channel must not keep
/// another channel's failing retries going; a loose view of a live channel counts, a
/// reviewer's finding). So a service that answers without moving the sync on cannot keep
/// its retries going.
struct SyncReach {
    var changeLogsApplied: Set<String> = []
    /// Pages of change logs applied since the manager opened (``SyncEngine/changeLogPagesApplied``).
    var changeLogPages = 0
    var live: Set<String> = []
    /// By channel: the messages its proof fetched forward from the first real-time message
    /// its fresh views wait for (``ChannelSyncState/freshArrivalsFetched``), which only
    /// stored pages move on.
    var freshArrivalsFetched: [String: Int] = [:]
    /// By view id, for views at the newest messages not following the live edge: the end
    /// of the cached range holding the view's newest edge.
    var viewReach: [Int: MessageKey] = [:]

    /// Whether `later` got further than this anywhere.
    func isPassed(by later: SyncReach) -> Bool {
        !later.changeLogsApplied.isSubset(of: changeLogsApplied) || later.changeLogPages > changeLogPages
            || !later.live.isSubset(of: live)
            || later.freshArrivalsFetched.contains { channel, fetched in fetched > freshArrivalsFetched[channel, default: 0] }
            || later.viewReach.contains { id, reach in viewReach[id].map { reach > $0 } ?? false }
    }
}

extension SyncEngine {
    /// The reconnect sync's reach now, in the current connection.
    func syncReach() -> SyncReach {
        var reach = SyncReach(changeLogPages: changeLogPagesApplied)
        for (channelURL, state) in channels {
            if state.changeLogsEpoch == epoch { reach.changeLogsApplied.insert(channelURL) }
            if state.liveEdge != nil { reach.live.insert(channelURL) }
            if state.freshArrivalsFetched > 0 { reach.freshArrivalsFetched[channelURL] = state.freshArrivalsFetched }
        }
        // Views that follow the live edge are left out: real-time messages extend their
        // range without the sync. A loose one, of a live channel too, reaches further only
        // as the sync stores pages (its range is not the live one; once it joins, it follows).
        for view in views.values where view.reachedNewest && (try? isFollowingLive(view)) == false {
            let edge = view.upperBound ?? view.viewpointKey
            if let chunk = (try? chunks(of: view.channelURL))?.first(where: { $0.contains(edge) }) { reach.viewReach[view.id] = chunk.end }
        }
        return reach
    }
}
