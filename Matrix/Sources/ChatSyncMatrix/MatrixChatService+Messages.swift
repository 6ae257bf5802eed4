import ChatSync
import Foundation

/// A page of `/messages`.
struct MatrixMessagesPage: Decodable, Sendable {
    var chunk: [MatrixEvent]
    var start: String?
    var end: String?
}

/// The answer of `/context/{eventId}`: tokens before and after the event.
struct MatrixContext: Decodable, Sendable {
    var start: String?
    var end: String?
}

/// The answer of `/timestamp_to_event`.
struct MatrixEventAtTime: Decodable, Sendable {
    var eventId: String
    enum CodingKeys: String, CodingKey { case eventId = "event_id" }
}

extension MatrixChatService {
    /// The events `/messages` reads in one page.
    static let pageSize = 100

    /// Messages around `(timestamp, anchorMessageId)`.
    ///
    /// The homeserver orders a room by its own timeline, ChatSync by
    /// `(createdAt, messageId)`; each side is read from the event nearest the
    /// timestamp (`/timestamp_to_event`, `/context`) outwards, then sorted by ChatSync's
    /// key. On one homeserver the two orders agree except between events of the same
    /// millisecond, whose ChatSync order follows their derived ids.
    public func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        let filter = query.filter ?? MessageFilter()
        var previous: [Message] = []
        var hasPrev = false
        if query.prevLimit > 0 {
            let token = try await token(before: query.timestamp, in: query.channelURL)
            (previous, hasPrev) = try await collect(
                query.channelURL, from: token, backward: true, want: query.prevLimit,
                accept: { filter.matches($0) && query.isOnPreviousSide($0.sortKey) })
        }
        var next: [Message] = []
        var hasNext = false
        if query.nextLimit > 0, query.timestamp < Int64.max {
            if let token = try await token(after: query.timestamp, in: query.channelURL) {
                (next, hasNext) = try await collect(
                    query.channelURL, from: token, backward: false, want: query.nextLimit,
                    accept: { filter.matches($0) && query.isOnNextSide($0.sortKey) })
            }
        }
        let page = (previous + next).sorted { $0.sortKey < $1.sortKey }
        return MessagePage(messages: page, hasPrev: hasPrev, hasNext: hasNext)
    }

    /// A token from which reading backwards starts with the newest event at or before
    /// `timestamp` (`nil`: from the newest event of the room).
    private func token(before timestamp: Int64, in roomId: String) async throws -> String?? {
        guard timestamp < Int64.max - 1 else { return .some(nil) }
        guard let eventId = try await eventId(at: timestamp + 1, backward: true, in: roomId) else { return nil }
        let context = try await call(
            .GET, roomPath(roomId, "/context/\(MatrixHTTP.segment(eventId))"), query: [("limit", "0")], as: MatrixContext.self)
        return .some(context.end)
    }

    /// A token from which reading forwards starts with the oldest event at or after
    /// `timestamp`, or `nil` when there is none.
    private func token(after timestamp: Int64, in roomId: String) async throws -> String? {
        guard let eventId = try await eventId(at: timestamp <= 0 ? 0 : timestamp - 1, backward: false, in: roomId) else { return nil }
        let context = try await call(
            .GET, roomPath(roomId, "/context/\(MatrixHTTP.segment(eventId))"), query: [("limit", "0")], as: MatrixContext.self)
        return context.start
    }

    /// The event nearest `timestamp` in a direction, or `nil` when there is none.
    private func eventId(at timestamp: Int64, backward: Bool, in roomId: String) async throws -> String? {
        let path = "/_matrix/client/v1/rooms/\(MatrixHTTP.segment(roomId))/timestamp_to_event"
        do {
            let answer = try await call(
                .GET, path, query: [("ts", String(timestamp)), ("dir", backward ? "b" : "f")], as: MatrixEventAtTime.self)
            return answer.eventId
        } catch let error as ChatServiceError where error.code == .notFound {
            return nil
        }
    }

    /// Reads from `token` in one direction until more than `want` messages pass `accept`
    /// or the room ends; answers the `want` nearest, and whether more exist.
    private func collect(
        _ roomId: String, from token: String??, backward: Bool, want: Int, accept: (Message) -> Bool
    ) async throws -> ([Message], Bool) {
        guard case .some(var from) = token else { return ([], false) }
        var found: [Message] = []
        while found.count <= want {
            var query = [("dir", backward ? "b" : "f"), ("limit", String(Self.pageSize))]
            if let from { query.append(("from", from)) }
            let page = try await call(.GET, roomPath(roomId, "/messages"), query: query, as: MatrixMessagesPage.self)
            found += try messages(of: page.chunk, in: roomId).filter(accept)
            guard let end = page.end, !page.chunk.isEmpty else { break }
            from = end
        }
        let ordered = found.sorted { backward ? $0.sortKey > $1.sortKey : $0.sortKey < $1.sortKey }
        return (Array(ordered.prefix(want)), ordered.count > want)
    }

    /// Edits, redactions and new messages of a room since `token`, a `/messages` token.
    public func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        guard let token else {
            let newest = try await call(
                .GET, roomPath(channelURL, "/messages"), query: [("dir", "b"), ("limit", "1")], as: MatrixMessagesPage.self)
            return MessageChangeLogs(updated: [], deletedMessageIds: [], token: newest.start ?? "", hasMore: false)
        }
        let page = try await call(
            .GET, roomPath(channelURL, "/messages"), query: [("dir", "f"), ("limit", String(max(1, limit))), ("from", token)],
            as: MatrixMessagesPage.self)
        var updated: [String: Message] = [:]
        var order: [String] = []
        var deleted: [Int64] = []
        for event in page.chunk {
            if event.type == "m.room.redaction", let target = event.redactedEventId {
                deleted.append(try ids.id(for: target, roomId: channelURL))
                updated[target] = nil
            } else if let target = event.replacedEventId {
                let original = try await self.event(target, in: channelURL)
                guard let message = try messages(of: [original], in: channelURL).first else { continue }
                if updated[target] == nil { order.append(target) }
                updated[target] = message
            } else if let message = try messages(of: [event], in: channelURL).first {
                if updated[event.eventId] == nil { order.append(event.eventId) }
                updated[event.eventId] = message
            }
        }
        return MessageChangeLogs(
            updated: order.compactMap { updated[$0] }, deletedMessageIds: deleted, token: page.end ?? token,
            hasMore: page.end != nil && page.chunk.count >= max(1, limit))
    }

    /// The user's own messages of a room sent with any of `reqIds` (their transaction
    /// ids), read back from the newest event at most ``lookUpDepth`` events.
    public func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        var missing = Set(reqIds)
        var found: [Message] = []
        var from: String?
        var read = 0
        while !missing.isEmpty, read < lookUpDepth {
            var query = [("dir", "b"), ("limit", String(Self.pageSize))]
            if let from { query.append(("from", from)) }
            let page = try await call(.GET, roomPath(channelURL, "/messages"), query: query, as: MatrixMessagesPage.self)
            read += page.chunk.count
            let mine = page.chunk.filter { $0.sender == userId && $0.transactionId.map(missing.contains) == true }
            for message in try messages(of: mine, in: channelURL) {
                missing.remove(message.reqId)
                found.append(message)
            }
            guard let end = page.end, !page.chunk.isEmpty else { break }
            from = end
        }
        return found
    }
}
