import ChatSyncTesting

/// Text a user may write that a store can mangle: a NUL (which C strings end at),
/// combining marks, joined emoji, bidirectional controls, line breaks, SQL's quotes and
/// wildcards, and length. A message's text, edits and corrections carry one as a tail;
/// the service must receive them byte for byte.
enum AwkwardText {
    static let tails = [
        "", "", "", " \u{0} after a NUL", " e\u{301}te\u{301}", " 👩‍👩‍👧‍👦🏳️‍🌈", " \u{202E}txet", "\nline two\r\n",
        " it's \"quoted\"; --", " 100% _like_ \\", " " + String(repeating: "long ", count: 1_000),
    ]

    /// One tail, often none.
    static func tail(using random: inout SeededGenerator) -> String {
        tails.randomElement(using: &random)!
    }
}
