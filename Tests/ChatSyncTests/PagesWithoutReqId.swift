import ChatSync
import ChatSyncTesting

/// A service whose history pages and change logs, once told to, leave every message's
/// `reqId` out, as many backends do outside the sender's answer: only the answer to a
/// send and a look-up by `reqId` still carry it. A message this device sent is then
/// known for its own only by what the outbox, the cache and the record of messages
/// synced lately remember, and by asking. Every other call goes through.
actor PagesWithoutReqId: ForwardingChatService {
    let base: any ChatService
    private var stripping = false

    init(base: any ChatService) { self.base = base }

    /// From now on, pages and change logs carry no `reqId`.
    func leaveReqIdsOut() { stripping = true }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        var page = try await base.fetchMessages(query)
        if stripping { page.messages = page.messages.map(Self.withoutReqId) }
        return page
    }

    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        var logs = try await base.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
        if stripping { logs.updated = logs.updated.map(Self.withoutReqId) }
        return logs
    }

    private static func withoutReqId(_ message: Message) -> Message {
        var copy = message
        copy.reqId = ""
        return copy
    }
}
