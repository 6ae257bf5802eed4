import ChatSync
import Synchronization

/// Wraps a service to play network trouble in the demo: airplane mode (requests fail,
/// the event stream reports `.offline`), a response lost after the server applied the
/// request, and a response that never comes because the app is killed.
final class NetworkSwitch: ChatService {
    private struct State {
        var online = true
        var loseNextSendResponse = false
        var hangNextSend = false
        var eventsMuted = false
        var streams: [AsyncStream<ServiceEvent>.Continuation] = []
    }
    let inner: any ChatService
    private let state = Mutex(State())

    init(_ inner: any ChatService) { self.inner = inner }

    func setOnline(_ online: Bool) {
        let streams = state.withLock { state in
            state.online = online
            return state.streams
        }
        for stream in streams { stream.yield(.connectionChanged(online ? .online : .offline)) }
    }

    var isOnline: Bool { state.withLock { $0.online } }

    func loseNextSendResponse() { state.withLock { $0.loseNextSendResponse = true } }
    func hangNextSend() { state.withLock { $0.hangNextSend = true } }
    /// Real-time events stop arriving (the app is frozen before it dies).
    func muteEvents(_ muted: Bool) { state.withLock { $0.eventsMuted = muted } }
    private var eventsMuted: Bool { state.withLock { $0.eventsMuted } }

    private func checkOnline() throws {
        if !isOnline { throw ChatServiceError.transient(.network, "airplane mode") }
    }

    func events() async -> AsyncStream<ServiceEvent> {
        let upstream = await inner.events()
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        state.withLock { $0.streams.append(continuation) }
        let task = Task { [self] in
            for await event in upstream {
                // While in airplane mode nothing comes through, including the server's own reports.
                if isOnline && !eventsMuted { continuation.yield(event) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        try checkOnline()
        let sent = try await inner.sendMessage(request)
        let (lose, hang) = state.withLock { state in
            defer { state.loseNextSendResponse = false; state.hangNextSend = false }
            return (state.loseNextSendResponse, state.hangNextSend)
        }
        if hang { try await Task.sleep(for: .seconds(3600)) }
        if lose { throw ChatServiceError.transient(.timeout, "the response was lost on the way back") }
        return sent
    }

    func fetchMessages(_ query: MessageQuery) async throws -> MessagePage {
        try checkOnline()
        return try await inner.fetchMessages(query)
    }
    func messageChangeLogs(channelURL: String, token: String?, limit: Int) async throws -> MessageChangeLogs {
        try checkOnline()
        return try await inner.messageChangeLogs(channelURL: channelURL, token: token, limit: limit)
    }
    func lookUpMessages(channelURL: String, reqIds: [String]) async throws -> [Message] {
        try checkOnline()
        return try await inner.lookUpMessages(channelURL: channelURL, reqIds: reqIds)
    }
    func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        try checkOnline()
        return try await inner.uploadFile(request, progress: progress)
    }
    func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        try checkOnline()
        return try await inner.updateMessage(channelURL: channelURL, messageId: messageId, text: text, operationId: operationId)
    }
    func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        try checkOnline()
        try await inner.deleteMessage(channelURL: channelURL, messageId: messageId, operationId: operationId)
    }
    func fetchChannels(_ query: ChannelPageQuery) async throws -> ChannelPage {
        try checkOnline()
        return try await inner.fetchChannels(query)
    }
    func channelChangeLogs(token: String?, limit: Int) async throws -> ChannelChangeLogs {
        try checkOnline()
        return try await inner.channelChangeLogs(token: token, limit: limit)
    }
}
