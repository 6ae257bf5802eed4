import ChatSync
import Foundation
import GRDBSQLite

/// The fewest SQLite C calls that do a job: the practical limit ChatSync is measured against.
final class RawSQLite {
    private(set) var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw BenchError("cannot open \(path)")
        }
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536")
    }

    deinit { sqlite3_close_v2(handle) }

    /// Removes a database file with its journal: a run that failed may have left a WAL
    /// behind, which would replay into the next file of that name.
    static func removeDatabase(at path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    func exec(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("\(sql.prefix(60)): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    func prepare(_ sql: String) throws -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK else {
            throw BenchError("\(sql.prefix(60)): \(String(cString: sqlite3_errmsg(handle)))")
        }
        return Statement(statement!)
    }

    final class Statement {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { sqlite3_finalize(pointer) }

        private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

        func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(pointer, index, value) }
        func bind(_ index: Int32, _ value: String) { sqlite3_bind_text(pointer, index, value, -1, Self.transient) }
        func bindNull(_ index: Int32) { sqlite3_bind_null(pointer, index) }

        /// Binds `message` to an `INSERT INTO message (CacheBuilder.columns)` with ten
        /// placeholders and runs it.
        func insert(_ message: Message) throws {
            bind(1, message.channelURL)
            bind(2, message.createdAt)
            bind(3, message.messageId)
            bind(4, message.reqId)
            bind(5, message.senderId)
            bind(6, message.kind.rawValue)
            bind(7, message.text)
            bind(8, message.customType)
            bind(9, message.data)
            bind(10, message.updatedAt)
            try run()
        }

        /// Runs a statement that returns no rows.
        func run() throws {
            guard sqlite3_step(pointer) == SQLITE_DONE else { throw BenchError("step failed") }
            sqlite3_reset(pointer)
        }

        /// Steps once and reads the first column as an integer (a `COUNT(*)`).
        func readInt() -> Int {
            defer { sqlite3_reset(pointer) }
            return sqlite3_step(pointer) == SQLITE_ROW ? Int(sqlite3_column_int64(pointer, 0)) : 0
        }

        /// Steps through every row, reading the columns a message page needs; answers the row count.
        func readRows(columns: Int32) -> Int {
            var rows = 0
            var checksum = 0
            while sqlite3_step(pointer) == SQLITE_ROW {
                rows += 1
                for column in 0..<columns {
                    if sqlite3_column_type(pointer, column) == SQLITE_TEXT {
                        checksum &+= Int(sqlite3_column_bytes(pointer, column))
                        _ = String(cString: sqlite3_column_text(pointer, column))
                    } else {
                        checksum &+= Int(sqlite3_column_int64(pointer, column))
                    }
                }
            }
            sqlite3_reset(pointer)
            blackHole(checksum)
            return rows
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Keeps a value alive so the optimizer cannot drop the work that made it.
@inline(never) func blackHole<T>(_ value: T) { _ = value }
