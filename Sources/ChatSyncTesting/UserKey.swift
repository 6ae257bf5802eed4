import ChatSync

/// A user as a service tells users apart: by the bytes of their id.
///
/// Swift's `==` and hashing take canonically equivalent ids ("zo\u{EB}" with a precomposed
/// ë, "zoe\u{308}" with a combining diaeresis) for one string; a real service, like the
/// cache's SQL, takes them for two users. The simulator keys its per-user state by this,
/// so that neither user gets the other's events, connection or rights.
struct UserKey: Hashable, Comparable, Sendable {
    let bytes: [UInt8]

    init(_ userId: String) { bytes = Array(userId.utf8) }

    static func < (lhs: UserKey, rhs: UserKey) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

extension Channel {
    /// The members, as the server keys its per-user state (``Channel/hasMember(_:)``
    /// answers whether one is a member).
    var memberKeys: Set<UserKey> { Set(memberIds.map(UserKey.init)) }
}
