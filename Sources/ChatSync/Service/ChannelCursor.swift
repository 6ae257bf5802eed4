import Foundation

/// Where a page of channels ended: enough of its last channel to find, in any
/// ``ChannelOrder``, every channel that sorts after it. A backend can use it as the
/// opaque ``ChannelPage/nextCursor`` of its channel pages.
///
/// ```swift
/// let cursor = ChannelCursor(order, lastChannelOfPage).encoded
/// // next request:
/// let after = ChannelCursor(encoded: cursor)!.channel
/// let nextPage = all.filter { order.sortsBefore(after, $0) }
/// ```
public struct ChannelCursor: Codable, Sendable, Hashable {
    /// The time the order sorts by (`lastActivityAt`, or `createdAt` for `.chronological`).
    public var sortTime: Int64
    /// The channel's name (for `.channelNameAlphabetical`).
    public var name: String
    /// The channel's URL, which breaks ties.
    public var channelURL: String

    /// The cursor just after `channel` in `order`.
    public init(_ order: ChannelOrder, _ channel: Channel) {
        sortTime = order == .chronological ? channel.createdAt : channel.lastActivityAt
        name = channel.name
        channelURL = channel.channelURL
    }

    /// Reads an ``encoded`` cursor; `nil` when it is not one.
    public init?(encoded: String) {
        guard let data = Data(base64Encoded: encoded),
            let cursor = try? JSONDecoder().decode(ChannelCursor.self, from: data)
        else { return nil }
        self = cursor
    }

    /// The cursor as an opaque string.
    public var encoded: String { ((try? JSONEncoder().encode(self)) ?? Data()).base64EncodedString() }

    /// A stand-in channel that sorts exactly where the page's last channel did.
    public var channel: Channel { Channel(channelURL: channelURL, name: name, createdAt: sortTime) }
}
