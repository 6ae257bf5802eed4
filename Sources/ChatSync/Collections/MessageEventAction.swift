/// What a collection event does to a list.
public enum MessageEventAction: String, Sendable, Hashable {
    /// Add the messages.
    case insert
    /// Replace the messages with the same identity.
    case update
    /// Delete the messages with the same identity.
    case remove
    /// Empty the list.
    case clear
}
