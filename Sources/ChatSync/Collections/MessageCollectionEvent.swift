/// A change to a ``MessageCollection``.
///
/// Replaying the list events in order on three empty lists (insert: add; update:
/// replace by identity; remove: delete by identity; clear: empty) gives exactly the
/// collection's `succeededMessages`, `pendingMessages` and `failedMessages`.
/// Identity is `messageId` for succeeded messages and `reqId` for the others.
///
/// ```swift
/// for await event in collection.events {
///     switch event {
///     case .succeeded(.insert, let messages): table.insert(messages)
///     case .newMessage(let message): showBadge(for: message)
///     case .hugeGapDetected: try await collection.resetViewpointTimestamp(.max)
///     default: break
///     }
/// }
/// ```
public enum MessageCollectionEvent: Sendable, Hashable {
    /// A change to the succeeded (synced) list.
    case succeeded(MessageEventAction, [Message])
    /// A change to the pending list.
    case pending(MessageEventAction, [Message])
    /// A change to the failed list, with its reason.
    case failed(MessageEventAction, [Message], FailedMessageEventActionReason)
    /// Another user's message arrived in real time (whether or not it entered the view).
    case newMessage(Message)
    /// The channel changed (its name, data, members or frozen state), as the cache now
    /// holds it: told by a real-time channel event, or learnt from the service's channel
    /// change logs (after a pause or a lost connection) or one of its channel pages. A new,
    /// edited or deleted message moves the cached channel's `lastMessage` without this
    /// event (the message comes as its own event); a copy this event carries has the last
    /// message the cache knew then.
    case channelUpdated(Channel)
    /// The channel was deleted, or the user left it. The cache dropped its messages and
    /// ranges (its unsent messages stay in the outbox, and fail when sent); the
    /// collection keeps the lists it showed, so that the screen can say what happened
    /// over them. A fetch online asks the service, which refuses it; offline it finds
    /// nothing cached. Apps usually tell the user and remove the collection.
    case channelRemoved(String)
    /// Too many messages are missing between the view and the server's newest to
    /// sync them all; the app typically calls `resetViewpointTimestamp(.max)`.
    case hugeGapDetected
    /// An edit or deletion of the user's failed for good (a permanent refusal, or its
    /// retries spent). Its local effect is already undone: the message shows the
    /// service's version again, or is back in the view. Delivered once per operation.
    case operationFailed(OutboxOperation, SyncFailure)
}
