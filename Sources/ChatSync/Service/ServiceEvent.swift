/// Something the chat service reports in real time.
///
/// ```swift
/// for await event in service.events() {
///     if case .messageReceived(let message) = event { print(message.text) }
/// }
/// ```
public enum ServiceEvent: Sendable, Hashable, Codable {
    /// The connection changed; the first event of every subscription.
    case connectionChanged(ConnectionState)
    /// A new message was stored in one of the user's channels.
    case messageReceived(Message)
    /// A message was edited.
    case messageUpdated(Message)
    /// A message was deleted.
    case messageDeleted(channelURL: String, messageId: Int64)
    /// A channel the user belongs to was created, changed or joined.
    case channelChanged(Channel)
    /// A channel was deleted, or the user left or was removed from it.
    case channelRemoved(channelURL: String)
}
