/// Which way a fetch reads from the view: toward older or newer messages.
///
/// ```swift
/// let hasMore = try await collection.fetchSucceededMessages(.previous)
/// ```
public enum Direction: Sendable, Hashable {
    /// Older messages, before the oldest one in the view.
    case previous
    /// Newer messages, after the newest one in the view.
    case next
}
