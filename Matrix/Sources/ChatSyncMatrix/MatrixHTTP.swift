import AsyncHTTPClient
import ChatSync
import Foundation
import NIOCore
import NIOHTTP1

/// Calls of the Matrix client-server API: JSON in and out, errors mapped to
/// ``ChatServiceError``, rate limits waited out a few times before they are reported.
package struct MatrixHTTP: Sendable {
    let client: HTTPClient
    /// The homeserver's base URL, such as `https://matrix.example.org`.
    let baseURL: String
    /// How many times a rate-limited call waits and tries again before it reports the limit.
    var rateLimitRetries = 3
    /// The longest wait a rate limit may impose inside one call.
    var longestRateLimitWait: Duration = .seconds(5)
    /// How long one call may take (a `/sync` long poll adds its own timeout).
    var timeout: TimeAmount = .seconds(30)

    /// The characters a path segment or a query value keeps as they are (RFC 3986 unreserved).
    static let unreserved: CharacterSet = {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return allowed
    }()

    /// Percent-encodes one path segment (room and event ids hold `!`, `$`, `:`).
    package static func segment(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value
    }

    /// Makes a call and decodes its JSON answer.
    func call<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], json body: JSONValue? = nil,
        token: String?, extraTimeout: TimeAmount = .zero, as answer: Answer.Type
    ) async throws -> Answer {
        let data = try await raw(
            method, path, query: query, body: body.map { try JSONEncoder().encode($0) }, contentType: "application/json",
            token: token, extraTimeout: extraTimeout)
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw ChatServiceError.transient(.badResponse, "the homeserver's answer to \(method) \(path) could not be read: \(error)")
        }
    }

    /// Makes a call with a raw body and answers the raw bytes of a successful answer.
    func raw(
        _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Data?, contentType: String,
        token: String?, extraTimeout: TimeAmount = .zero, progress: (@Sendable (Double) -> Void)? = nil
    ) async throws -> Data {
        var attempt = 0
        while true {
            var request = HTTPClientRequest(url: url(path, query))
            request.method = method
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            if let body {
                request.headers.add(name: "Content-Type", value: contentType)
                request.body =
                    progress.map { .stream(ProgressChunks(data: body, progress: $0), length: .known(Int64(body.count))) }
                    ?? .bytes(ByteBuffer(bytes: body))
            }
            let response: HTTPClientResponse
            let bytes: ByteBuffer
            do {
                response = try await client.execute(request, timeout: timeout + extraTimeout)
                bytes = try await response.body.collect(upTo: 64 << 20)
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                throw ChatServiceError.transient(.timeout, "\(method) \(path) timed out")
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw ChatServiceError.transient(.network, "\(method) \(path): \(error)")
            }
            let data = Data(bytes.readableBytesView)
            let status = Int(response.status.code)
            if (200..<300).contains(status) { return data }
            let errorBody = try? JSONDecoder().decode(MatrixErrorBody.self, from: data)
            let mapped = MatrixErrorMapping.error(status: status, body: errorBody)
            if mapped.code == .rateLimited, attempt < rateLimitRetries {
                attempt += 1
                let wait = min(MatrixErrorMapping.retryAfter(errorBody) ?? .milliseconds(500), longestRateLimitWait)
                try await Task.sleep(for: wait)
                continue
            }
            throw mapped
        }
    }

    private func url(_ path: String, _ query: [(String, String)]) -> String {
        guard !query.isEmpty else { return baseURL + path }
        let pairs = query.map { "\($0.0)=\(Self.segment($0.1))" }
        return baseURL + path + "?" + pairs.joined(separator: "&")
    }
}

/// A file's bytes in chunks, reporting the fraction handed to the connection as the
/// HTTP client pulls each chunk.
struct ProgressChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let data: Data
    let progress: @Sendable (Double) -> Void
    static let chunkSize = 64 * 1024

    struct AsyncIterator: AsyncIteratorProtocol {
        let data: Data
        let progress: @Sendable (Double) -> Void
        var offset = 0

        mutating func next() async -> ByteBuffer? {
            guard offset < data.count else { return nil }
            let end = Swift.min(offset + ProgressChunks.chunkSize, data.count)
            let chunk = ByteBuffer(bytes: data[data.startIndex + offset..<data.startIndex + end])
            offset = end
            progress(Double(offset) / Double(data.count))
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(data: data, progress: progress) }
}
