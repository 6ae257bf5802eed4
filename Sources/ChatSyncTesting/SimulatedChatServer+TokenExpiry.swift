import ChatSync

// MARK: - Message change-log tokens, and their expiry

extension SimulatedChatServer {
    /// Makes every message change-log token issued so far unusable, as a server does that
    /// keeps its change logs for a limited time: a request with one fails for good
    /// (`ChatServiceError.permanent(.invalid, …)`), and a request without a token gets a
    /// fresh one.
    public func expireMessageChangeLogTokens() {
        messageTokenEra += 1
    }

    /// The token for "every change up to `sequence`" in the current era. The first era's
    /// tokens are the bare sequence number.
    func messageToken(_ sequence: Int64) -> String {
        messageTokenEra == 0 ? String(sequence) : "\(messageTokenEra):\(sequence)"
    }

    /// The change sequence a token stands for; throws for a token of another era, one
    /// this server never issued, or garbage.
    func messageTokenSequence(_ token: String) throws -> Int64 {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        let era = parts.count == 2 ? Int(parts[0]) : 0
        guard parts.count <= 2, let era, let since = parts.last.flatMap({ Int64($0) }), since >= 0, since <= changeSeq else {
            throw ChatServiceError.permanent(.invalid, "unknown change-log token '\(token)'")
        }
        guard era == messageTokenEra else {
            throw ChatServiceError.permanent(.invalid, "expired change-log token '\(token)'")
        }
        return since
    }
}
