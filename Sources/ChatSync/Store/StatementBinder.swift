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

    mutating func text(_ value: String?) {
        index += 1
        guard let value else { sqlite3_bind_null(statement, index); return }
        sqlite3_bind_text(statement, index, value, -1, Self.transient)
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
        sqlite3_reset(statement)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        var binder = StatementBinder(statement)
        bind(&binder)
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }
}
