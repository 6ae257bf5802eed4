import ChatSync
import Foundation

/// The answer of `/joined_rooms`.
struct MatrixJoinedRooms: Decodable, Sendable {
    var joinedRooms: [String]
    enum CodingKeys: String, CodingKey { case joinedRooms = "joined_rooms" }
}

/// The parts of a `/sync` answer the service reads.
struct MatrixSyncAnswer: Decodable, Sendable {
    struct Timeline: Decodable, Sendable {
        var events: [MatrixEvent]?
        var limited: Bool?
    }
    struct JoinedRoom: Decodable, Sendable {
        var timeline: Timeline?
        var state: Timeline?
    }
    struct Rooms: Decodable, Sendable {
        var join: [String: JoinedRoom]?
        var leave: [String: JSONValue]?
    }
    var nextBatch: String
    var rooms: Rooms?
    enum CodingKeys: String, CodingKey {
        case nextBatch = "next_batch"
        case rooms
    }
}

extension MatrixChatService {
    /// The `/sync` filter: room timelines and state, nothing of presence or account data.
    static func syncFilter(timelineLimit: Int) -> String {
        "{\"presence\":{\"types\":[]},\"account_data\":{\"types\":[]},\"room\":{\"timeline\":{\"limit\":\(timelineLimit)},"
            + "\"state\":{\"lazy_load_members\":true},\"ephemeral\":{\"types\":[]},\"account_data\":{\"types\":[]}}}"
    }

    /// A page of the joined rooms, sorted in the query's order. The homeserver has no
    /// sorted room list, so every joined room is read and the page cut here.
    public func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage {
        let rooms = try await call(.GET, "/_matrix/client/v3/joined_rooms", as: MatrixJoinedRooms.self).joinedRooms
        var channels = try await withThrowingTaskGroup(of: Channel.self) { group in
            for room in rooms { group.addTask { try await self.channel(room) } }
            return try await group.reduce(into: [Channel]()) { $0.append($1) }
        }
        channels = channels.filter(query.matches)
        channels.sort { query.order.sortsBefore($0, $1) }
        if let cursor = query.cursor.flatMap(ChannelCursor.init(encoded:)) {
            let after = cursor.channel
            channels = channels.filter { query.order.sortsBefore(after, $0) }
        }
        let page = Array(channels.prefix(max(1, query.limit)))
        let nextCursor = channels.count > page.count ? page.last.map { ChannelCursor(query.order, $0).encoded } : nil
        return ChannelPage(channels: page, nextCursor: nextCursor)
    }

    /// A room as a channel: name, members, creation time, newest message.
    func channel(_ roomId: String) async throws -> Channel {
        let state = try await call(.GET, roomPath(roomId, "/state"), as: [MatrixEvent].self)
        let created = state.first { $0.type == "m.room.create" }
        let name = state.first { $0.type == "m.room.name" }?.content["name"]?.string ?? ""
        let members = state.filter { $0.type == "m.room.member" && $0.content["membership"]?.string == "join" }
            .compactMap(\.stateKey).sorted()
        let createdAt = created?.originServerTs ?? 0
        let newest = try await call(
            .GET, roomPath(roomId, "/messages"), query: [("dir", "b"), ("limit", "20")], as: MatrixMessagesPage.self)
        let last = try messages(of: newest.chunk, in: roomId).first
        return Channel(
            channelURL: roomId, name: name, customType: created?.content["type"]?.string ?? "", memberIds: members,
            createdAt: createdAt, updatedAt: state.map(\.originServerTs).max() ?? createdAt, lastMessage: last)
    }

    /// Rooms changed or left since `token`, a `/sync` batch token.
    public func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        var query = [("timeout", "0"), ("filter", Self.syncFilter(timelineLimit: 1))]
        if let token { query.append(("since", token)) }
        let answer = try await call(.GET, "/_matrix/client/v3/sync", query: query, as: MatrixSyncAnswer.self)
        guard token != nil else {
            return ChannelChangeLogs(updated: [], deletedChannelURLs: [], token: answer.nextBatch, hasMore: false)
        }
        var updated: [Channel] = []
        for room in (answer.rooms?.join ?? [:]).keys.sorted() { updated.append(try await channel(room)) }
        let left = (answer.rooms?.leave ?? [:]).keys.sorted()
        return ChannelChangeLogs(updated: updated, deletedChannelURLs: left, token: answer.nextBatch, hasMore: false)
    }
}
