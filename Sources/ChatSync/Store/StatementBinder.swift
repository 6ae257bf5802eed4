import GRDB
import GRDBSQLite

/// Binds values to a prepared statement's parameters in order, straight through
/// SQLite's C API: the hot paths' way (batch ingest, a send), where building argument
/// arrays of existentials cost more than SQLite's own work.
///
/// ``execute(_:in:binding:)`` owns the statement's life cycle: reset before binding, run,
/// then reset and cleared, as GRDB expects of a cached statement.
struct StatementBinder {
    private let statement: OpaquePointer
    /// The last parameter bound (parameters count from 1).
    private var index: Int32 = 0

    init(_ statement: OpaquePointer) { self.statement = statement }

    /// SQLite copies the text, so the Swift string need not outlive the call.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Bound with its length in bytes: told to find the end itself, SQLite stops at the
    /// first NUL, and a message's text may hold one (the Outbox model's awkward texts
    /// came back cut there).
    mutating func text(_ value: String?) {
        index += 1
        guard var value else { sqlite3_bind_null(statement, index); return }
        let (statement, index) = (statement, index)
        value.withUTF8 { bytes in
            // An empty buffer may have no address, which SQLite would bind as NULL.
            guard let start = bytes.baseAddress, !bytes.isEmpty else {
                sqlite3_bind_text(statement, index, "", 0, Self.transient)
                return
            }
            let text = UnsafeRawPointer(start).assumingMemoryBound(to: CChar.self)
            sqlite3_bind_text64(statement, index, text, UInt64(bytes.count), Self.transient, UInt8(SQLITE_UTF8))
        }
    }

    mutating func int(_ value: Int64?) {
        index += 1
        guard let value else { sqlite3_bind_null(statement, index); return }
        sqlite3_bind_int64(statement, index, value)
    }

    mutating func int(_ value: Int) { int(Int64(value)) }

    /// Stored as 0 or 1, as GRDB stores a `Bool`.
    mutating func bool(_ value: Bool?) { int(value.map { $0 ? 1 : 0 }) }

    mutating func double(_ value: Double?) {
        index += 1
        guard let value else { sqlite3_bind_null(statement, index); return }
        sqlite3_bind_double(statement, index, value)
    }

    /// Binds `statement`'s parameters through `bind` and runs it (it answers no rows),
    /// leaving it reset and cleared for GRDB's statement cache; throws SQLite's error as
    /// GRDB would.
    static func execute(_ statement: OpaquePointer, in db: Database, binding bind: (inout StatementBinder) -> Void) throws {
        try eachRow(statement, in: db, binding: bind) { _ in }
    }

    /// Binds `statement`'s parameters through `bind`, runs it and answers what `read`
    /// makes of its first row (`nil` when it answers none), leaving it reset and cleared.
    static func firstRow<T>(
        _ statement: OpaquePointer, in db: Database, binding bind: (inout StatementBinder) -> Void,
        read: (ColumnReader) -> T
    ) throws -> T? {
        var first: T?
        try eachRow(statement, in: db, binding: bind, stopAfterFirst: true) { first = read($0) }
        return first
    }

    /// Binds `statement`'s parameters through `bind`, runs it and hands each row it
    /// answers to `read` (only the first with `stopAfterFirst`), leaving it reset and
    /// cleared for GRDB's statement cache.
    static func eachRow(
        _ statement: OpaquePointer, in db: Database, binding bind: (inout StatementBinder) -> Void,
        stopAfterFirst: Bool = false, read: (ColumnReader) -> Void
    ) throws {
        sqlite3_reset(statement)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var binder = StatementBinder(statement)
        bind(&binder)
        let row = ColumnReader(statement: statement)
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW:
                read(row)
                if stopAfterFirst { return }
            case SQLITE_DONE: return
            case let code: throw error(code, in: db)
            }
        }
    }

    /// SQLite's error, as GRDB would throw it.
    private static func error(_ code: Int32, in db: Database) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
    }
}

/// Reads the columns of the row a statement stands on, straight through SQLite's C API.
struct ColumnReader {
    fileprivate let statement: OpaquePointer

    /// The integer in column `index` (counted from 0), or `nil` for SQL `NULL`.
    func int(_ index: Int32) -> Int64? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, index)
    }

    /// The flag in column `index` (stored as 0 or 1, as ``StatementBinder/bool(_:)``
    /// binds it), or `nil` for SQL `NULL`.
    func bool(_ index: Int32) -> Bool? { int(index).map { $0 != 0 } }

    /// The real number in column `index` (counted from 0), or `nil` for SQL `NULL`.
    func double(_ index: Int32) -> Double? {
        sqlite3_column_type(statement, index) == SQLITE_NULL ? nil : sqlite3_column_double(statement, index)
    }

    /// The text in column `index` (counted from 0), or `nil` for SQL `NULL`; invalid
    /// UTF-8 is repaired, as Swift repairs any decoded text.
    func text(_ index: Int32) -> String? {
        guard sqlite3_column_type(statement, index) != SQLITE_NULL, let bytes = sqlite3_column_text(statement, index) else {
            return nil
        }
        // After sqlite3_column_text, as SQLite asks: the length of the text it answered.
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
