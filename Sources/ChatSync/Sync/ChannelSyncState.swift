/// What the engine knows, in memory, about one channel's sync.
struct ChannelSyncState {
    /// The cache is complete from the newest chunk's start up to this key *and* the
    /// server has nothing newer: every new message reaches us in real time. Valid only
    /// while the connection is unbroken; `nil` otherwise.
    var liveEdge: MessageKey?
    /// The connection epoch in which change logs were last applied.
    var changeLogsEpoch: Int?
}
