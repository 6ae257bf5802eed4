import Foundation
import Testing

@testable import ChatSync

@Suite("Value types", .capturingLogs)
struct ValueTypeTests {
    private func roundTrip<T: Codable & Equatable>(_ value: T) throws {
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(T.self, from: data) == value)
    }

    @Test func everyModelTypeSurvivesACodableRoundTrip() throws {
        let file = FileInfo(name: "cat.jpg", mimeType: "image/jpeg", size: 1234, url: "https://x/cat.jpg", localPath: "/tmp/cat.jpg")
        let failure = SyncFailure(code: 403, message: "forbidden", isRetryable: false)
        let message = Message(
            messageId: 7, reqId: "r-1", channelURL: "general", senderId: "alice", kind: .image,
            text: "caption", customType: "photo", data: "{\"a\":1}", file: file, parentMessageId: 3,
            createdAt: 100, updatedAt: 200, syncState: .failed, uploadProgress: 0.5, failure: failure)
        try roundTrip(message)
        try roundTrip(file)
        try roundTrip(failure)
        try roundTrip(
            Channel(
                channelURL: "general", name: "General", customType: "team", data: "d", memberIds: ["a", "b"],
                createdAt: 1, updatedAt: 2, lastMessage: message, isFrozen: true))
        try roundTrip(MessageFilter(kinds: [.text, .image], customTypes: ["", "x"], senderIds: ["bob"]))
        try roundTrip(MessageFilter())
        for kind in MessageKind.allCases { try roundTrip(kind) }
        for state in SyncState.allCases { try roundTrip(state) }
        for policy in MessageResendPolicy.allCases { try roundTrip(policy) }
        for lane in SendLane.allCases { try roundTrip(lane) }
        for state in [ConnectionState.online, .offline, .connecting] { try roundTrip(state) }
        for order in ChannelOrder.allCases { try roundTrip(order) }
        try roundTrip(MessageKey(createdAt: 5, messageId: 9))
    }

    @Test func messageDefaultsUpdatedAtToCreatedAt() {
        let message = Message(channelURL: "c", senderId: "a", createdAt: 42)
        #expect(message.updatedAt == 42)
        #expect(message.syncState == .synced)
        #expect(message.reqId == "")
        #expect(Message(channelURL: "c", senderId: "a", createdAt: 42, updatedAt: 50).updatedAt == 50)
    }

    @Test func kindsMapToLanes() {
        #expect(MessageKind.text.lane == .text)
        #expect(MessageKind.custom.lane == .text)
        for kind in [MessageKind.image, .video, .audio, .file] { #expect(kind.lane == .media) }
    }

    @Test func pendingStates() {
        #expect(SyncState.allCases.filter(\.isPending) == [.created, .uploading, .syncing])
    }

    @Test func filterMatchesEveryCriterionThatIsSet() {
        let text = makeMessage(1, at: 1, sender: "bob")
        let photo = makeMessage(2, at: 2, sender: "alice", kind: .image, customType: "photo")
        #expect(MessageFilter().matches(text))
        #expect(MessageFilter().matches(photo))
        #expect(MessageFilter(kinds: [.image]).matches(photo))
        #expect(!MessageFilter(kinds: [.image]).matches(text))
        #expect(MessageFilter(customTypes: [""]).matches(text), "a text message's custom type is \"\"")
        #expect(!MessageFilter(customTypes: [""]).matches(photo))
        #expect(MessageFilter(customTypes: ["photo"]).matches(photo))
        #expect(MessageFilter(senderIds: ["bob"]).matches(text))
        #expect(!MessageFilter(senderIds: ["bob"]).matches(photo))
        #expect(!MessageFilter(kinds: [.image], senderIds: ["bob"]).matches(photo), "every criterion must hold")
        #expect(MessageFilter(kinds: [.image, .text], customTypes: ["photo"], senderIds: ["alice"]).matches(photo))
        #expect(!MessageFilter(kinds: []).matches(text), "an empty set keeps nothing")
    }

    /// Ids compare as a service and the cache's SQL compare them, byte for byte: two
    /// spellings of one accented letter are two senders (and two custom types, of
    /// messages and of channels).
    @Test func filtersCompareIdsAndCustomTypesByTheirBytes() {
        let (composed, decomposed) = ("zo\u{EB}", "zoe\u{308}")
        #expect(composed == decomposed, "Swift takes the two spellings for one")
        let fromComposed = makeMessage(1, at: 1, sender: composed, kind: .custom, customType: composed)
        let fromDecomposed = makeMessage(2, at: 2, sender: decomposed, kind: .custom, customType: decomposed)
        #expect(MessageFilter(senderIds: [composed]).matches(fromComposed))
        #expect(!MessageFilter(senderIds: [composed]).matches(fromDecomposed))
        #expect(MessageFilter(senderIds: [decomposed]).matches(fromDecomposed))
        #expect(!MessageFilter(senderIds: [decomposed]).matches(fromComposed))
        #expect(MessageFilter(customTypes: [composed]).matches(fromComposed))
        #expect(!MessageFilter(customTypes: [composed]).matches(fromDecomposed))
        #expect(!MessageFilter(customTypes: [decomposed]).matches(fromComposed))
        #expect(MessageFilter(customTypes: [decomposed]).matches(fromDecomposed))
        let composedTeam = Channel(channelURL: "a", customType: composed, createdAt: 1)
        let decomposedTeam = Channel(channelURL: "b", customType: decomposed, createdAt: 1)
        #expect(ChannelListQuery(customTypes: [composed]).matches(composedTeam))
        #expect(!ChannelListQuery(customTypes: [composed]).matches(decomposedTeam))
        #expect(ChannelListQuery(customTypes: [decomposed]).matches(decomposedTeam))
        #expect(!ChannelListQuery(customTypes: [decomposed]).matches(composedTeam))
    }

    @Test func messageParamsFactories() {
        let text = MessageParams.text("hi")
        #expect(text.kind == .text && text.text == "hi" && text.customType == "" && text.data == "")
        let custom = MessageParams.custom(customType: "poll", data: "{}", text: "vote")
        #expect(custom.kind == .custom && custom.customType == "poll" && custom.data == "{}" && custom.text == "vote")
        var file = MessageParams.file(.video, localPath: "/tmp/v.mp4", name: "v.mp4", mimeType: "video/mp4", caption: "look")
        file.parentMessageId = 9
        #expect(file.kind == .video && file.localPath == "/tmp/v.mp4" && file.fileName == "v.mp4")
        #expect(file.mimeType == "video/mp4" && file.text == "look" && file.parentMessageId == 9)
    }

    @Test func messageKeysOrderByTimeThenId() {
        #expect(MessageKey(createdAt: 1, messageId: 9) < MessageKey(createdAt: 2, messageId: 1))
        #expect(MessageKey(createdAt: 2, messageId: 1) < MessageKey(createdAt: 2, messageId: 2))
        #expect(MessageKey.min < MessageKey(createdAt: .min, messageId: 0))
        #expect(MessageKey(createdAt: .max, messageId: 0) < MessageKey.max)
    }

    @Test func channelOrdersBreakTiesByURL() {
        let a = Channel(channelURL: "a", name: "Zed", createdAt: 10)
        let b = Channel(channelURL: "b", name: "Amy", createdAt: 10, lastMessage: makeMessage(1, at: 50, channel: "b"))
        #expect(ChannelOrder.latestLastMessage.sortsBefore(b, a))
        #expect(ChannelOrder.chronological.sortsBefore(a, b), "equal createdAt falls back to the URL")
        #expect(ChannelOrder.channelNameAlphabetical.sortsBefore(b, a))
    }

    @Test func serviceErrorsClassify() {
        #expect(ChatServiceError.http(status: 500, message: "").isTransient)
        #expect(ChatServiceError.http(status: 503, message: "").isTransient)
        #expect(ChatServiceError.http(status: 429, message: "").isTransient)
        #expect(ChatServiceError.http(status: 408, message: "").isTransient)
        #expect(!ChatServiceError.http(status: 400, message: "").isTransient)
        #expect(!ChatServiceError.http(status: 403, message: "").isTransient)
        #expect(!ChatServiceError.http(status: 413, message: "").isTransient)
        #expect(ChatServiceError.classify(CancellationError()).isTransient)
        struct Unknown: Error {}
        #expect(ChatServiceError.classify(Unknown()).isTransient)
        let permanent = ChatServiceError.permanent(.forbidden, "no")
        #expect(ChatServiceError.classify(permanent) == permanent)
        #expect(permanent.failure == SyncFailure(code: 403, message: "no", isRetryable: false))
    }
}
