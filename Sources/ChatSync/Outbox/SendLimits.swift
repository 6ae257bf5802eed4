/// What ChatSync accepts to send; checked before a message enters the outbox.
///
/// ```swift
/// if text.count > SendLimits.maxTextLength { showTooLong() }
/// ```
public enum SendLimits {
    /// The longest text (or caption), in characters.
    public static let maxTextLength = 10_000
    /// The largest `data` payload, in UTF-8 bytes.
    public static let maxDataSize = 65_536
    /// The largest attachment, in bytes (100 MiB).
    public static let maxFileSize: Int64 = 100 * 1024 * 1024
}
