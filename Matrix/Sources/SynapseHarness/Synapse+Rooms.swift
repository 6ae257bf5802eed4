import AsyncHTTPClient
import ChatSyncMatrix
import Foundation
import NIOCore

extension Synapse {
    /// Creates a room named `name` as `creator`; each of `members` is invited and joins
    /// at once. Answers the room id.
    public func createRoom(
        name: String, by creator: MatrixChatService, joining members: [MatrixChatService]
    ) async throws
        -> String
    {
        let body: [String: Any] = ["name": name, "preset": "private_chat", "invite": members.map(\.userId)]
        let created = try await post("/_matrix/client/v3/createRoom", body, token: creator.accessToken)
        guard let room = created["room_id"] as? String else { throw SynapseError("createRoom answered no room_id") }
        for member in members {
            let path = "/_matrix/client/v3/join/" + MatrixHTTP.segment(room)
            _ = try await post(path, [:], token: member.accessToken)
        }
        return room
    }

    /// A POST with a JSON body that must succeed; answers the JSON object it returned.
    private func post(_ path: String, _ body: [String: Any], token: String) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(try JSONSerialization.data(withJSONObject: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        let answer = try JSONSerialization.jsonObject(with: Data(bytes.readableBytesView)) as? [String: Any] ?? [:]
        guard response.status == .ok else { throw SynapseError("POST \(path) answered \(response.status): \(answer)") }
        return answer
    }
}
