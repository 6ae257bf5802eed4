/// A chat channel as the cache and the channel list see it.
///
/// ```swift
/// let channel = Channel(channelURL: "general", name: "General", memberIds: ["alice", "bob"],
///                       createdAt: 1_700_000_000_000)
/// ```
public struct Channel: Sendable, Hashable, Codable {
    /// The channel's unique address.
    public var channelURL: String
    /// The display name.
    public var name: String
    /// An app-defined type; `""` when none.
    public var customType: String
    /// An app-defined payload; `""` when none.
    public var data: String
    /// The users who belong to the channel.
    public var memberIds: [String]
    /// When the channel was created, in milliseconds since 1970.
    public var createdAt: Int64
    /// When the channel was last changed, in milliseconds since 1970.
    public var updatedAt: Int64
    /// The newest message, if the channel has any. In the cache and channel lists, with
    /// the user's queued edit of it laid over (`isEditPending`), or, while its deletion is
    /// queued, the newest cached message left (or none) standing in.
    public var lastMessage: Message?
    /// A frozen channel refuses new messages.
    public var isFrozen: Bool

    /// Creates a channel. An `updatedAt` of `nil` means "the same as `createdAt`".
    public init(
        channelURL: String, name: String = "", customType: String = "", data: String = "",
        memberIds: [String] = [], createdAt: Int64, updatedAt: Int64? = nil,
        lastMessage: Message? = nil, isFrozen: Bool = false
    ) {
        self.channelURL = channelURL
        self.name = name
        self.customType = customType
        self.data = data
        self.memberIds = memberIds
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.lastMessage = lastMessage
        self.isFrozen = isFrozen
    }

    /// The time the channel list sorts by in ``ChannelOrder/latestLastMessage`` order.
    public var lastActivityAt: Int64 { lastMessage?.createdAt ?? createdAt }
}
