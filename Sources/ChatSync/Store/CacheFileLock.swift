#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps a cache file to one manager at a time: an exclusive `flock` on a file beside
/// it (`<path>-lock`), held from before the cache is opened until it is closed.
///
/// A manager keeps what it knows of its file in memory (complete ranges, the batch it
/// stored last, the outbox's lanes), so a second manager writing to the same file,
/// in this process or another, would have each trust a cache the other changed. A
/// second open is refused instead.
///
/// The lock is on a file of its own, not the database: SQLite locks the database with
/// POSIX record locks, which any `close` of another descriptor of that file by this
/// process would drop. `flock` locks belong to the open file description, so two opens
/// in one process exclude each other as two processes do, and the kernel drops the lock
/// of a process that dies. The lock file stays when the lock is released: deleting it
/// would let a second opener lock a file that a third then replaces.
///
/// On a local file system. Linux emulates `flock` on NFS and SMB mounts with per-process
/// record locks, under which two managers of one process are not told apart.
final class CacheFileLock: Sendable {
    /// The lock file's descriptor while the lock is held, `nil` once released.
    private let descriptor: LockedState<Int32?>

    private init(descriptor: Int32) {
        self.descriptor = LockedState(descriptor)
    }

    deinit { release() }

    /// The path of the lock file of the cache at `databasePath`.
    static func lockPath(forDatabaseAt databasePath: String) -> String { databasePath + "-lock" }

    /// Takes the lock of the cache at `databasePath`, without waiting.
    ///
    /// - Throws: ``SyncManagerError/Code/databaseIO`` when another manager holds it, or
    ///   when the lock file cannot be created or locked (a missing directory, no rights).
    static func acquire(forDatabaseAt databasePath: String) throws -> CacheFileLock {
        let path = lockPath(forDatabaseAt: databasePath)
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            throw SyncManagerError(.databaseIO, "could not open the cache's lock file '\(path)': \(describe(code))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK {
                throw SyncManagerError(
                    .databaseIO,
                    "the cache '\(databasePath)' is open in another SyncManager, in this process or another; "
                        + "close that one first")
            }
            throw SyncManagerError(.databaseIO, "could not lock the cache's lock file '\(path)': \(describe(code))")
        }
        return CacheFileLock(descriptor: descriptor)
    }

    /// Lets the next manager open the cache. Later calls do nothing.
    func release() {
        let held = descriptor.withLock { held -> Int32? in
            let taken = held
            held = nil
            return taken
        }
        guard let held else { return }
        close(held)  // closing the last descriptor of the open file description drops its flock
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
