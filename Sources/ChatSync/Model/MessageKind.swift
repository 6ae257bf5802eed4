/// What a message carries. The kind decides the send lane.
///
/// ```swift
/// MessageKind.custom.lane  // .text
/// MessageKind.image.lane   // .media
/// ```
public enum MessageKind: String, Sendable, Codable, CaseIterable {
    /// Plain text.
    case text
    /// An app-defined message with a `customType` and `data`.
    case custom
    /// An image attachment.
    case image
    /// A video attachment.
    case video
    /// An audio attachment.
    case audio
    /// Any other file attachment.
    case file

    /// The outbox lane that sends messages of this kind: ``SendLane/text`` for
    /// text and custom messages, ``SendLane/media`` for the others.
    public var lane: SendLane {
        switch self {
        case .text, .custom: .text
        case .image, .video, .audio, .file: .media
        }
    }

    /// Whether messages of this kind carry a file.
    public var hasAttachment: Bool { lane == .media }
}
