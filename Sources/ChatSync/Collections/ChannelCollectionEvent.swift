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
