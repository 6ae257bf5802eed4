/// One of the two FIFO send queues each channel has.
///
/// Messages of one lane are sent strictly one at a time in creation order; the
/// lanes are independent, so a slow upload never holds back text.
public enum SendLane: String, Sendable, Codable, CaseIterable {
    /// Text and custom messages.
    case text
    /// Image, video, audio and file messages.
    case media
}
