import Foundation

/// A cheap look at a database file's header before SQLite opens it, so that a file
/// that is not a database, or was cut short, is refused without being touched.
///
/// A full integrity check reads every page and would make opening a large cache
/// slow; the header tells enough to catch foreign and truncated files.
enum DatabaseFileCheck {
    private static let magic = Array("SQLite format 3\u{0}".utf8)

    static func validate(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }  // new file: nothing to check
        defer { try? handle.close() }
        let fileSize = (try? handle.seekToEnd()) ?? 0
        if fileSize == 0 { return }  // an empty file is an empty database
        try? handle.seek(toOffset: 0)
        let header = Array((try? handle.read(upToCount: 100)) ?? Data())
        guard header.count == 100, Array(header[0..<16]) == magic else {
            throw SyncManagerError(.corruptDatabase, "'\(path)' is not an SQLite database")
        }
        var pageSize = UInt64(header[16]) << 8 | UInt64(header[17])
        if pageSize == 1 { pageSize = 65_536 }
        guard pageSize >= 512, pageSize & (pageSize - 1) == 0 else {
            throw SyncManagerError(.corruptDatabase, "'\(path)' has a damaged header (page size \(pageSize))")
        }
        if fileSize % pageSize != 0 {
            throw SyncManagerError(.corruptDatabase, "'\(path)' is truncated: \(fileSize) bytes is not a whole number of pages")
        }
        // The page count in the header is only valid when the two counters agree.
        let changeCounter = bigEndian(header, at: 24)
        let validFor = bigEndian(header, at: 92)
        let pageCount = bigEndian(header, at: 28)
        // With a non-empty write-ahead log the file may legitimately lag behind the
        // header until the log is checkpointed, so only judge a file without one.
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? UInt64) ?? 0
        if changeCounter == validFor, pageCount > 0, walSize == 0, fileSize < pageCount * pageSize {
            throw SyncManagerError(
                .corruptDatabase,
                "'\(path)' is truncated: \(fileSize) bytes, but its header counts \(pageCount) pages of \(pageSize)")
        }
    }

    private static func bigEndian(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt64($1) }
    }
}
