import ChatSync
import Foundation

/// The answer of a send or a redaction: the new event's id.
struct MatrixSent: Decodable, Sendable {
    var eventId: String
    enum CodingKeys: String, CodingKey { case eventId = "event_id" }
}

/// The answer of a media upload.
struct MatrixUploaded: Decodable, Sendable {
    var contentURI: String
    enum CodingKeys: String, CodingKey { case contentURI = "content_uri" }
}

extension MatrixChatService {
    /// Sends an `m.room.message` with the request id as its transaction id: the
    /// homeserver answers a repeated transaction id with the event it already made.
    public func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        guard !request.reqId.isEmpty else { throw ChatServiceError.permanent(.invalid, "reqId is empty") }
        let replyTo = try request.parentMessageId.map { try eventId(of: $0, in: request.channelURL) }
        let content = MatrixMessageMapping.content(for: request, replyTo: replyTo)
        let path = roomPath(request.channelURL, "/send/m.room.message/\(MatrixHTTP.segment(request.reqId))")
        let sent = try await call(.PUT, path, json: content, as: MatrixSent.self)
        let event: MatrixEvent
        do {
            event = try await self.event(sent.eventId, in: request.channelURL)
        } catch let error as ChatServiceError {
            // The room holds the event from here on. A refusal of the read-back (a 429, a
            // 503, a 403) must not reach the outbox as a refused send, which it takes for
            // "nothing stored" (the message would be cancellable while the room shows it).
            throw ChatServiceError.transient(.badResponse, "\(sent.eventId) was stored; reading it back failed: \(error)")
        }
        guard var message = try messages(of: [event], in: request.channelURL).first else {
            throw ChatServiceError.transient(.badResponse, "the homeserver's copy of \(sent.eventId) is not a message")
        }
        message.reqId = request.reqId
        return message
    }

    /// Uploads a file to the media repository; its `mxc://` URL is the file's URL.
    public func uploadFile(_ request: UploadRequest, progress: @escaping @Sendable (Double) -> Void) async throws -> FileInfo {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: request.localPath))
        } catch {
            throw ChatServiceError.permanent(.invalid, "the file \(request.localPath) cannot be read: \(error)")
        }
        let bytes = try await http.raw(
            .POST, "/_matrix/media/v3/upload", query: [("filename", request.name)], body: data, contentType: request.mimeType,
            token: accessToken, progress: progress)
        guard let uploaded = try? JSONDecoder().decode(MatrixUploaded.self, from: bytes) else {
            throw ChatServiceError.transient(.badResponse, "the homeserver's answer to an upload could not be read")
        }
        progress(1)
        return FileInfo(name: request.name, mimeType: request.mimeType, size: Int64(data.count), url: uploaded.contentURI)
    }

    /// Edits a message with an `m.replace` event. The operation id is its transaction id,
    /// so a repeat after a lost response is the same event, not a second edit.
    public func updateMessage(channelURL: String, messageId: Int64, text: String, operationId: String) async throws -> Message {
        let target = try eventId(of: messageId, in: channelURL)
        let path = roomPath(channelURL, "/send/m.room.message/\(MatrixHTTP.segment("edit-" + operationId))")
        let sent = try await call(.PUT, path, json: MatrixMessageMapping.editContent(of: target, text: text), as: MatrixSent.self)
        let edit = try await event(sent.eventId, in: channelURL)
        let original = try await event(target, in: channelURL)
        guard var message = try messages(of: [original], in: channelURL).first else {
            throw ChatServiceError.permanent(.notFound, "message \(messageId) of \(channelURL) is gone")
        }
        message.text = text
        message.updatedAt = max(message.updatedAt, edit.originServerTs)
        return message
    }

    /// Redacts a message, with the operation id as the transaction id. A message
    /// already redacted counts as deleted.
    public func deleteMessage(channelURL: String, messageId: Int64, operationId: String) async throws {
        let target = try eventId(of: messageId, in: channelURL)
        let path = roomPath(channelURL, "/redact/\(MatrixHTTP.segment(target))/\(MatrixHTTP.segment("redact-" + operationId))")
        _ = try await call(.PUT, path, json: .object([:]), as: MatrixSent.self)
    }
}
