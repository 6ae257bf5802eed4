/// Receives a collection's events as callbacks, in the same order as
/// ``MessageCollection/events``. Every method has an empty default, so implement
/// only what you need.
///
/// ```swift
/// final class ChatScreen: MessageCollectionHandler {
///     func collection(_ c: MessageCollection, didReceive action: MessageEventAction,
///                     succeededMessages: [Message]) {
///         // apply to the table view
///     }
/// }
/// await collection.setHandler(screen)
/// ```
///
/// Callbacks run on ChatSync's engine, one at a time; hand work to the main actor
/// rather than blocking in them.
public protocol MessageCollectionHandler: AnyObject, Sendable {
    /// The succeeded list changed.
    func collection(_ c: MessageCollection, didReceive action: MessageEventAction, succeededMessages: [Message])
    /// The pending list changed.
    func collection(_ c: MessageCollection, didReceive action: MessageEventAction, pendingMessages: [Message])
    /// The failed list changed.
    func collection(
        _ c: MessageCollection, didReceive action: MessageEventAction, failedMessages: [Message],
        reason: FailedMessageEventActionReason)
    /// Another user's message arrived.
    func collection(_ c: MessageCollection, didReceiveNewMessage message: Message)
    /// The channel changed, as the cache now holds it (see ``MessageCollectionEvent/channelUpdated(_:)``).
    func collection(_ c: MessageCollection, didUpdateChannel channel: Channel)
    /// The channel was removed.
    func collection(_ c: MessageCollection, didRemoveChannel channelURL: String)
    /// Too many messages are missing to sync them all.
    func collectionDidDetectHugeGap(_ c: MessageCollection)
    /// An edit or deletion of the user's failed for good; its local effect was undone.
    func collection(_ c: MessageCollection, didFailOperation operation: OutboxOperation, failure: SyncFailure)
}

extension MessageCollectionHandler {
    /// Does nothing.
    public func collection(_ c: MessageCollection, didReceive action: MessageEventAction, succeededMessages: [Message]) {}
    /// Does nothing.
    public func collection(_ c: MessageCollection, didReceive action: MessageEventAction, pendingMessages: [Message]) {}
    /// Does nothing.
    public func collection(
        _ c: MessageCollection, didReceive action: MessageEventAction, failedMessages: [Message],
        reason: FailedMessageEventActionReason
    ) {}
    /// Does nothing.
    public func collection(_ c: MessageCollection, didReceiveNewMessage message: Message) {}
    /// Does nothing.
    public func collection(_ c: MessageCollection, didUpdateChannel channel: Channel) {}
    /// Does nothing.
    public func collection(_ c: MessageCollection, didRemoveChannel channelURL: String) {}
    /// Does nothing.
    public func collectionDidDetectHugeGap(_ c: MessageCollection) {}
    /// Does nothing.
    public func collection(_ c: MessageCollection, didFailOperation operation: OutboxOperation, failure: SyncFailure) {}
}

extension MessageCollectionEvent {
    /// Calls the handler method that matches the event.
    func deliver(to handler: any MessageCollectionHandler, from collection: MessageCollection) {
        switch self {
        case .succeeded(let action, let messages):
            handler.collection(collection, didReceive: action, succeededMessages: messages)
        case .pending(let action, let messages):
            handler.collection(collection, didReceive: action, pendingMessages: messages)
        case .failed(let action, let messages, let reason):
            handler.collection(collection, didReceive: action, failedMessages: messages, reason: reason)
        case .newMessage(let message):
            handler.collection(collection, didReceiveNewMessage: message)
        case .channelUpdated(let channel):
            handler.collection(collection, didUpdateChannel: channel)
        case .channelRemoved(let channelURL):
            handler.collection(collection, didRemoveChannel: channelURL)
        case .hugeGapDetected:
            handler.collectionDidDetectHugeGap(collection)
        case .operationFailed(let operation, let failure):
            handler.collection(collection, didFailOperation: operation, failure: failure)
        }
    }
}
