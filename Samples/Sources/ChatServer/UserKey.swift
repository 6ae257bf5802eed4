/// A user as the server tells users apart: by the bytes of their id, as its SQL compares
/// the ids in its tables. Swift's `==` and hashing take canonically equivalent ids
/// ("zo\u{EB}" with a precomposed ë, "zoe\u{308}" with a combining diaeresis) for one
/// string; here they are two users, with their own connections and change-log entries.
/// (Memberships and rights go through ChatSync's `Channel.hasMember(_:)` and
/// `Message.isSent(by:)`, which compare the same way.)
struct UserKey: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ userId: String) { bytes = Array(userId.utf8) }
}

extension Sequence<String> {
    /// The ids, each user once (by bytes), in their first order.
    func distinctUsers() -> [String] {
        var seen: Set<UserKey> = []
        return filter { seen.insert(UserKey($0)).inserted }
    }
}
