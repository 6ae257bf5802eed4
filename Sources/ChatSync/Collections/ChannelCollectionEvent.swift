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

/// A change to a ``ChannelCollection``.
///
/// Replaying the events in order (insert: add; update: replace by URL; move: remove and
/// insert again where the query's order puts it; remove: delete by URL; clear: empty)
/// and sorting by the query's order gives exactly ``ChannelCollection/channels``.
///
/// ```swift
/// for await case .channels(let action, let channels) in collection.events {
///     print(action, channels.map(\.name))
/// }
/// ```
public enum ChannelCollectionEvent: Sendable, Hashable {
    /// An action on some channels.
    case channels(ChannelEventAction, [Channel])
}
