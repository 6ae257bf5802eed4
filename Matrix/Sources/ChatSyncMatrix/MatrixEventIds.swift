import Foundation
import GRDB

/// ChatSync's `Int64` message ids for Matrix event ids, and the way back.
///
/// An event's id is derived from its event id (64-bit FNV-1a, kept positive), so the
/// same event gets the same id on every device in nearly every case. The pairs are
/// stored, so that an edit or a redaction can name the event after a relaunch.
///
/// **Collisions.** When the derived id is already taken by another event (about one in
/// 2^31 after 2^31 events), the event takes the next free id and a warning is counted
/// in ``collisionCount``. The pair is stored at once, so the id never changes on this
/// device; another device that met the two events in the other order may number them
/// the other way round, which only matters to that device's own cache.
public final class MatrixEventIds: Sendable {
    private let database: DatabaseQueue

    /// Opens the map at `path` (created if missing), or in memory when `path` is `nil`.
    public init(path: String?) throws {
        // Another connection to the same file (an app extension, the session before a
        // relaunch finishing a write) makes a writer wait for it, not fail.
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        database = try path.map { try DatabaseQueue(path: $0, configuration: configuration) } ?? DatabaseQueue()
        try database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS event_ids (
                        message_id INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, room_id TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS id_collisions (count INTEGER NOT NULL);
                    """)
        }
    }

    /// The derived id of an event id: FNV-1a over its UTF-8 bytes, in 1…2^62.
    public static func derivedId(_ eventId: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in eventId.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let id = Int64(hash & 0x3FFF_FFFF_FFFF_FFFF)
        return id == 0 ? 1 : id
    }

    /// The ids of these events, assigned and stored in one transaction where new.
    public func ids(for events: [(eventId: String, roomId: String)]) throws -> [String: Int64] {
        guard !events.isEmpty else { return [:] }
        return try database.write { db in
            var answer: [String: Int64] = [:]
            for (eventId, roomId) in events where answer[eventId] == nil {
                if let known = try Int64.fetchOne(db, sql: "SELECT message_id FROM event_ids WHERE event_id = ?", arguments: [eventId]) {
                    answer[eventId] = known
                    continue
                }
                var candidate = Self.derivedId(eventId)
                while try Bool.fetchOne(db, sql: "SELECT 1 FROM event_ids WHERE message_id = ?", arguments: [candidate]) == true {
                    try db.execute(sql: "INSERT INTO id_collisions (count) VALUES (1)")
                    candidate = candidate >= 0x3FFF_FFFF_FFFF_FFFF ? 1 : candidate + 1
                }
                try db.execute(
                    sql: "INSERT INTO event_ids (message_id, event_id, room_id) VALUES (?, ?, ?)",
                    arguments: [candidate, eventId, roomId])
                answer[eventId] = candidate
            }
            return answer
        }
    }

    /// The id of one event, assigned and stored if new.
    public func id(for eventId: String, roomId: String) throws -> Int64 {
        try ids(for: [(eventId, roomId)])[eventId] ?? Self.derivedId(eventId)
    }

    /// The event behind a ChatSync message id, if this device has met it.
    public func event(for messageId: Int64) throws -> (eventId: String, roomId: String)? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT event_id, room_id FROM event_ids WHERE message_id = ?", arguments: [messageId])
                .map { ($0[0], $0[1]) }
        }
    }

    /// How many times a derived id was already taken.
    public var collisionCount: Int {
        (try? database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM id_collisions") }) ?? 0
    }

    /// Stores `messageId` for `eventId` as it is (tests make collisions with it).
    func occupy(_ messageId: Int64, with eventId: String) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT INTO event_ids (message_id, event_id, room_id) VALUES (?, ?, '')", arguments: [messageId, eventId])
        }
    }
}
