// Ids (channel URLs, user and sender ids, custom types) are opaque bytes to services and to the
// cache's SQL, which compares them byte for byte; Swift's `==` compares strings by
// canonical equivalence, so "zo\u{EB}" and "zoe\u{308}" are equal to it. Every check that
// must agree with a query of the cache, or with a service (whose message is the
// user's own: UserIdentity.swift), compares through these.

extension String {
    /// Whether the two strings have the same UTF-8 bytes (not only equal to Swift).
    func hasSameBytes(as other: String) -> Bool { utf8.elementsEqual(other.utf8) }
}

extension Set<String> {
    /// Whether the set holds `value` with the same bytes. A set holds at most one string
    /// that Swift's `==` takes for `value`, so a byte-equal one can only be that one.
    func containsSameBytes(as value: String) -> Bool {
        guard let index = firstIndex(of: value) else { return false }
        return self[index].hasSameBytes(as: value)
    }
}
