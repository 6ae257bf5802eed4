/// What a channel-list event does.
public enum ChannelEventAction: String, Sendable, Hashable {
    /// The channels join the list.
    case insert
    /// The channels changed in place.
    case update
    /// The channels changed where they sort: remove them and insert them again at their new place.
    case move
    /// The channels leave the list.
    case remove
    /// The list is empty.
    case clear
}
