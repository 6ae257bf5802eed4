/// One channel's requests in flight, and what the engine learnt meanwhile (in real time,
/// from change logs or look-ups) that their answers cannot know.
///
/// Kept apart from ``ChannelSyncState``, which a channel's removal or `clearCache()`
/// resets while requests are still out: only a request's own start and end change these
/// counts, so an answer arriving after a reset never leaves them off by one (a count
/// stuck below zero would stop recording for good).
struct RequestsInFlight {
    /// Requests for the channel's messages or change logs.
    var answersAwaited = 0
    /// Of those, page requests that may prove the channel live.
    var liveCapable = 0
    /// Deletions, and edits by message id (the newest version of each), learnt while a
    /// request was in flight, whichever way they came: its answer, made before them, may
    /// name messages the cache did not hold yet, deleted or in an older version (see
    /// ``SyncEngine/laterThanTheAnswer(_:in:)``).
    var deletedWhileAsked: Set<Int64> = []
    var editedWhileAsked: [Int64: Message] = [:]
    /// Request ids of this device's messages remembered as synced while a request was in
    /// flight: its answer, read before, may lack them although the service holds them.
    var rememberedWhileAsked: Set<String> = []
}
