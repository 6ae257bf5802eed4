/// A user as the server tells users apart: by the bytes of their id, as its SQL compares
/// the ids in its tables. Swift's `==` and hashing take canonically equivalent ids
/// ("zo\u{EB}" with a precomposed ë, "zoe\u{308}" with a combining diaeresis) for one
/// string; here they are two users, with their own memberships, rights and connections.
struct UserKey: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ userId: String) { bytes = Array(userId.utf8) }
}

extension String {
    /// Whether the two ids name the same user (the same bytes).
    func isSameUser(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension Sequence<String> {
    /// Whether `userId` is among these ids, by bytes.
    func containsUser(_ userId: String) -> Bool { contains { $0.isSameUser(as: userId) } }

    /// The ids, each user once (by bytes), in their first order.
    func distinctUsers() -> [String] {
        var seen: Set<UserKey> = []
        return filter { seen.insert(UserKey($0)).inserted }
    }
}
