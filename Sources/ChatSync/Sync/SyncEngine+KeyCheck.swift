// MARK: - Keys the app names rows by

extension SyncEngine {
    /// Refuses a key the app names rows by (a channel URL, a host's request id) that is
    /// empty or holds a NUL: rows are also found by their keys through GRDB, which binds
    /// text only up to a NUL, so such a key would find another key's rows (a deletion in
    /// `"general\0x"` deleted a message of `"general"`) or none at all.
    static func checkKey(_ key: String, named name: String) throws {
        guard !key.isEmpty else { throw SyncManagerError(.invalidParameter, "\(name) must not be empty") }
        guard !key.utf8.contains(0) else { throw SyncManagerError(.invalidParameter, "\(name) must not hold a NUL") }
    }
}
