import ChatSync
import Foundation

extension MatrixChatService {
    /// Real-time events from a `/sync` long-poll loop.
    ///
    /// The stream starts with `.connecting`, reports `.online` once the first sync
    /// answered, and `.offline` when one fails (then retries after 1, 2, 4 … 30 s).
    /// A room whose timeline the homeserver cut (`limited`) reports a reconnect, so
    /// ChatSync catches that room up from its change logs.
    public func events() async -> AsyncStream<ServiceEvent> {
        let (stream, continuation) = AsyncStream<ServiceEvent>.makeStream()
        continuation.yield(.connectionChanged(.connecting))
        let loop = Task { await self.runSync(continuation) }
        continuation.onTermination = { _ in loop.cancel() }
        return stream
    }

    private func runSync(_ continuation: AsyncStream<ServiceEvent>.Continuation) async {
        var since: String?
        var backoff = 1
        var online = false
        while !Task.isCancelled {
            do {
                var query = [("filter", Self.syncFilter(timelineLimit: 50)), ("timeout", since == nil ? "0" : "30000")]
                if let since { query.append(("since", since)) }
                let answer = try await call(
                    .GET, "/_matrix/client/v3/sync", query: query, extraTimeout: .seconds(30), as: MatrixSyncAnswer.self)
                if !online {
                    online = true
                    continuation.yield(.connectionChanged(.online))
                }
                // The first answer is the present: ChatSync reads history by pages, not from it.
                if since != nil { try await deliver(answer, to: continuation) }
                since = answer.nextBatch
                backoff = 1
            } catch {
                guard !Task.isCancelled else { break }
                logger.debug("sync failed: \(error)")
                if online {
                    online = false
                    continuation.yield(.connectionChanged(.offline))
                }
                try? await Task.sleep(for: .seconds(backoff))
                backoff = min(backoff * 2, 30)
                if !Task.isCancelled { continuation.yield(.connectionChanged(.connecting)) }
            }
        }
        continuation.finish()
    }

    /// Turns one sync answer into ChatSync events.
    private func deliver(_ answer: MatrixSyncAnswer, to continuation: AsyncStream<ServiceEvent>.Continuation) async throws {
        for room in (answer.rooms?.leave ?? [:]).keys.sorted() { continuation.yield(.channelRemoved(channelURL: room)) }
        for (roomId, joined) in (answer.rooms?.join ?? [:]).sorted(by: { $0.key < $1.key }) {
            let events = joined.timeline?.events ?? []
            if joined.timeline?.limited == true {
                // Events were left out: a reconnect makes ChatSync read the gap.
                continuation.yield(.connectionChanged(.connecting))
                continuation.yield(.connectionChanged(.online))
                continue
            }
            if events.contains(where: { $0.stateKey != nil }) || !(joined.state?.events ?? []).isEmpty {
                continuation.yield(.channelChanged(try await channel(roomId)))
            }
            for event in events {
                if event.type == "m.room.redaction", let target = event.redactedEventId {
                    continuation.yield(.messageDeleted(channelURL: roomId, messageId: try ids.id(for: target, roomId: roomId)))
                } else if let target = event.replacedEventId {
                    let original = try await self.event(target, in: roomId)
                    if let message = try messages(of: [original], in: roomId).first { continuation.yield(.messageUpdated(message)) }
                } else if let message = try messages(of: [event], in: roomId).first {
                    continuation.yield(.messageReceived(message))
                }
            }
        }
    }
}
