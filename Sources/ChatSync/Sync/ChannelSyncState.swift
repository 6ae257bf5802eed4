/// What the engine knows, in memory, about one channel's sync: its complete ranges,
/// how far it is known live, and what waits for it to go live.
struct ChannelSyncState {
    /// The channel's chunks as the store holds them, read once and then kept in step
    /// by the engine (the store's only writer); `nil` until first read.
    var chunks: [Chunk]?
    /// The cache is complete from the newest chunk's start up to this key *and* the
    /// server has nothing newer: every new message reaches us in real time. Valid only
    /// while the connection is unbroken; `nil` otherwise.
    var liveEdge: MessageKey?
    /// The end of a page that reached the server's newest message while the real-time
    /// stream was not up (so not proof of liveness): views can still treat it as the
    /// end for now and catch up once the channel goes live. Forgotten with the epoch.
    var unprovenNewest: MessageKey?
    /// The connection epoch in which change logs were last applied.
    var changeLogsEpoch: Int?
    /// Real-time messages received while a request that may prove the channel live was
    /// in flight (``RequestsInFlight/liveCapable``) and the channel was not live yet: they
    /// are newer than the request's answer and join the cache when it makes the channel
    /// live. Dropped when the connection breaks.
    var heldForLive: [Message] = []

    /// The first real-time message that reached the channel while views opened at its
    /// newest messages (fresh views) waited for it to go live, and how many messages
    /// proving it live fetched from there. Those views show what came after they opened,
    /// so the proof starts there rather than at the newest page, which a burst can
    /// outgrow before the proof is asked for.
    var freshArrivalsSince: MessageKey?
    var freshArrivalsFetched = 0

    /// The newest key the cache is known to reach: proven live, or reached without proof.
    var newestKnown: MessageKey? { liveEdge ?? unprovenNewest }

    /// The real-time stream broke: nothing about this channel is live any more. Its
    /// chunks stay true (they are facts about the past).
    mutating func connectionLost() {
        liveEdge = nil
        unprovenNewest = nil
        heldForLive.removeAll()
        forgetFreshArrivals()
    }

    mutating func forgetFreshArrivals() {
        freshArrivalsSince = nil
        freshArrivalsFetched = 0
    }
}
