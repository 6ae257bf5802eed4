import ChatSync
import Foundation

/// How Matrix `m.room.message` events and ChatSync messages map onto each other.
///
/// | ChatSync | Matrix |
/// | --- | --- |
/// | `channelURL` | room id |
/// | `messageId` | derived from the event id (``MatrixEventIds``) |
/// | `reqId` | the transaction id (`unsigned.transaction_id`, seen by the sending device) |
/// | `senderId` | the sender's user id (`@alice:example.org`) |
/// | `.text` | `m.text`, `m.notice`, `m.emote` (`body`) |
/// | `.image`, `.video`, `.audio`, `.file` | `m.image`, `m.video`, `m.audio`, `m.file` (`url` is the `mxc://` URL, `filename`, `info.mimetype`, `info.size`; a caption is the `body` when it differs from the file name) |
/// | `.custom`, `customType`, `data` | `org.chatsync.kind`, `org.chatsync.custom_type`, `org.chatsync.data` in the content |
/// | `parentMessageId` | `m.relates_to.m.in_reply_to.event_id` |
/// | `createdAt` | `origin_server_ts` |
/// | `updatedAt`, edited `text` | the newest `m.replace` edit the server bundles |
public enum MatrixMessageMapping {
    static let kindKey = "org.chatsync.kind"
    static let customTypeKey = "org.chatsync.custom_type"
    static let dataKey = "org.chatsync.data"

    /// Whether an event is a message ChatSync shows: an `m.room.message` that is not an
    /// edit of another and was not redacted.
    static func isMessage(_ event: MatrixEvent) -> Bool {
        event.type == "m.room.message" && event.replacedEventId == nil && !event.isRedacted && event.content["msgtype"] != nil
    }

    /// The ChatSync message of an event (see ``isMessage(_:)``), with ids from `ids`.
    static func message(_ event: MatrixEvent, roomId: String, ids: [String: Int64], parentId: Int64?) -> Message {
        var content = event.content
        var updatedAt = event.originServerTs
        if let edit = event.bundledEdit, let newContent = edit.content["m.new_content"] {
            content = newContent
            updatedAt = max(updatedAt, edit.originServerTs)
        }
        // An edit changes the text only: the kind and the file stay the original's.
        let msgtype = event.content["msgtype"]?.string ?? "m.text"
        var kind: MessageKind =
            switch msgtype {
            case "m.image": .image
            case "m.video": .video
            case "m.audio": .audio
            case "m.file": .file
            default: .text
            }
        if event.content[kindKey]?.string == MessageKind.custom.rawValue { kind = .custom }
        let body = content["body"]?.string ?? ""
        var text = body
        var file: FileInfo?
        if kind.hasAttachment {
            let name = event.content["filename"]?.string ?? body
            text = name == body ? "" : body
            file = FileInfo(
                name: name, mimeType: event.content["info"]?["mimetype"]?.string ?? "application/octet-stream",
                size: event.content["info"]?["size"]?.int64 ?? 0, url: event.content["url"]?.string)
        }
        return Message(
            messageId: ids[event.eventId] ?? MatrixEventIds.derivedId(event.eventId), reqId: event.transactionId ?? "",
            channelURL: roomId, senderId: event.sender, kind: kind, text: text,
            customType: event.content[customTypeKey]?.string ?? "", data: event.content[dataKey]?.string ?? "",
            file: file, parentMessageId: parentId, createdAt: event.originServerTs, updatedAt: updatedAt)
    }

    /// The event id a message replies to, if any.
    static func replyTarget(_ event: MatrixEvent) -> String? {
        event.content["m.relates_to"]?["m.in_reply_to"]?["event_id"]?.string
    }

    /// The content of an `m.room.message` that sends `request`; `replyTo` is the event id
    /// of its parent, if it has one.
    static func content(for request: SendMessageRequest, replyTo: String?) -> JSONValue {
        var members: [String: JSONValue] = [:]
        switch request.kind {
        case .text, .custom:
            members["msgtype"] = .string("m.text")
            members["body"] = .string(request.text)
        case .image, .video, .audio, .file:
            members["msgtype"] = .string("m.\(request.kind.rawValue)")
            let name = request.file?.name ?? "file"
            members["body"] = .string(request.text.isEmpty ? name : request.text)
            members["filename"] = .string(name)
            if let url = request.file?.url { members["url"] = .string(url) }
            members["info"] = .object([
                "mimetype": .string(request.file?.mimeType ?? "application/octet-stream"),
                "size": .number(Double(request.file?.size ?? 0)),
            ])
        }
        if request.kind == .custom { members[kindKey] = .string(MessageKind.custom.rawValue) }
        if !request.customType.isEmpty { members[customTypeKey] = .string(request.customType) }
        if !request.data.isEmpty { members[dataKey] = .string(request.data) }
        if let replyTo { members["m.relates_to"] = .object(["m.in_reply_to": .object(["event_id": .string(replyTo)])]) }
        return .object(members)
    }

    /// The content of an edit that gives event `eventId` the text `text`.
    static func editContent(of eventId: String, text: String) -> JSONValue {
        .object([
            "msgtype": .string("m.text"),
            "body": .string("* \(text)"),
            "m.new_content": .object(["msgtype": .string("m.text"), "body": .string(text)]),
            "m.relates_to": .object(["rel_type": .string("m.replace"), "event_id": .string(eventId)]),
        ])
    }
}
