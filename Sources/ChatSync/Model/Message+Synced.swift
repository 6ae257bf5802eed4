extension Message {
    /// This message as the service stores it: synced, with no upload progress and no failure.
    /// A copy from the service (real time, a page, change logs) is taken this way, whatever
    /// its fields claimed.
    var asSynced: Message {
        var synced = self
        synced.syncState = .synced
        synced.failure = nil
        synced.uploadProgress = nil
        return synced
    }
}
