/// One send lane: a channel's text or media queue.
struct LaneKey: Hashable, Sendable, CustomStringConvertible {
    var channelURL: String
    var lane: SendLane

    var description: String { "\(channelURL)/\(lane.rawValue)" }
}
