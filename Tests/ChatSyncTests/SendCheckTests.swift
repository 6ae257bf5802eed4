import ChatSyncTesting
import Foundation
import GRDB
import Testing

@testable import ChatSync

/// The cache's answer to a send: whether the user may post, and the time floor. The
/// member list is searched by SQLite, so every shape a stored list can take is tried.
@Suite("Send check", .capturingLogs)
struct SendCheckTests {
    private func check(memberIds json: String?, newest: Int64? = nil) throws -> ChatStore.SendCheck {
        let store = try ChatStore.open(path: nil, userId: "alice")
        if let json {
            try store.upsertChannels([Channel(channelURL: "c", createdAt: 1)])
            try store.write { try $0.execute(sql: "UPDATE channel SET member_ids = ? WHERE channel_url = 'c'", arguments: [json]) }
        }
        if let newest { try store.upsertMessages([makeMessage(1, at: newest), makeMessage(2, at: newest - 5)]) }
        return try store.read { try ChatStore.sendCheck(channelURL: "c", userId: "alice", in: $0) }
    }

    @Test func onlyAListWithoutTheUserRefuses() throws {
        #expect(try check(memberIds: #"["bob","alice"]"#).isMember)
        #expect(try !check(memberIds: #"["bob","carol"]"#).isMember)
        #expect(try !check(memberIds: #"["alicia"]"#).isMember, "a prefix is not the user")
        #expect(try check(memberIds: nil).isMember, "a channel not cached is the server's to judge")
        #expect(try check(memberIds: "[]").isMember, "an empty list means the members are not known")
    }

    @Test func aDamagedListCountsAsNoList() throws {
        for json in ["not json", #"{"alice":1}"#, #"["bob",2]"#, "", #""bob""#] {
            #expect(try check(memberIds: json).isMember, "\(json)")
        }
    }

    @Test func theFloorIsTheNewestCachedMessage() throws {
        #expect(try check(memberIds: #"["alice"]"#, newest: 40).newestCreatedAt == 40)
        #expect(try check(memberIds: nil, newest: 7).newestCreatedAt == 7)
        #expect(try check(memberIds: #"["alice"]"#).newestCreatedAt == nil)
    }
}
