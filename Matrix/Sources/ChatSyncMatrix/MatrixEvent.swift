import Foundation

/// A room event as the client-server API returns it, with the fields ChatSync reads.
struct MatrixEvent: Sendable, Hashable, Decodable {
    var eventId: String
    var type: String
    var sender: String
    var originServerTs: Int64
    var roomId: String?
    var content: JSONValue
    var unsigned: JSONValue?
    /// The event a redaction removes (top-level before room version 11, in `content` after).
    var redacts: String?
    var stateKey: String?

    enum CodingKeys: String, CodingKey {
        case eventId = "event_id"
        case type, sender, content, unsigned, redacts
        case originServerTs = "origin_server_ts"
        case roomId = "room_id"
        case stateKey = "state_key"
    }

    /// The id of the event a redaction removes, whatever the room version.
    var redactedEventId: String? { redacts ?? content["redacts"]?.string }

    /// The transaction id the sender's own device gave the event (its ChatSync `reqId`).
    var transactionId: String? { unsigned?["transaction_id"]?.string }

    /// Whether the event was redacted: its content is gone.
    var isRedacted: Bool { unsigned?["redacted_because"] != nil }

    /// The relation of the event, if any (`m.replace` for an edit).
    var relationType: String? { content["m.relates_to"]?["rel_type"]?.string }

    /// The event an edit replaces.
    var replacedEventId: String? { relationType == "m.replace" ? content["m.relates_to"]?["event_id"]?.string : nil }

    /// The newest edit the server bundled with the event, if any.
    var bundledEdit: MatrixEvent? {
        guard let edit = unsigned?["m.relations"]?["m.replace"] else { return nil }
        return try? JSONValueDecoder.decode(MatrixEvent.self, from: edit)
    }
}

/// Decodes a value from a ``JSONValue`` by way of its JSON text.
enum JSONValueDecoder {
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let data = try JSONEncoder().encode(value)
        return try JSONDecoder().decode(type, from: data)
    }
}
