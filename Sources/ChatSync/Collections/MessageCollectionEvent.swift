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

/// Why a failed-list event happened.
public enum FailedMessageEventActionReason: String, Sendable, Hashable {
    /// No particular reason: a message failed, or its state changed.
    case none
    /// A resend failed, or the automatic resends were used up.
    case updateResendFailed
    /// A resend succeeded; the message moves to the succeeded list.
    case removeResendSucceeded
    /// It was older than the retention period.
    case removeRetentionExpired
    /// The channel held more failed messages than allowed; the oldest went.
    case removeExceededMaxCount
    /// The app deleted it.
    case removeManualAction
    /// It went for a reason ChatSync could not tell.
    case removeUnknown
}

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
    /// The channel changed.
    case channelUpdated(Channel)
    /// The channel was deleted, or the user left it.
    case channelRemoved(String)
    /// Too many messages are missing between the view and the server's newest to
    /// sync them all; the app typically calls `resetViewpointTimestamp(.max)`.
    case hugeGapDetected
}
