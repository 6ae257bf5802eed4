// MARK: - Coverage: which cached range a fetch may read, and where it ends

extension SyncEngine {

    /// The chunk a fetch may read from at `anchor`, or `nil` when the service must be asked.
    func coverage(for view: MessageView, anchor: MessageKey, direction: Direction) throws -> Chunk? {
        let all = try chunks(of: view.channelURL)
        if let chunk = all.first(where: { $0.contains(anchor) }) { return chunk }
        if let edge = channels[view.channelURL]?.newestKnown, anchor >= edge,
            let chunk = all.first(where: { $0.contains(edge) })
        {
            return chunk  // past the live edge nothing exists yet: the live chunk is the whole story
        }
        if !isOnline, direction == .previous, view.succeeded.isEmpty {
            // Offline with an empty view: show the newest cached page before the viewpoint.
            return all.last { $0.start <= anchor }
        }
        return nil
    }

    /// Moves an anchor that lies outside `chunk` onto its near edge (inclusive).
    static func clamp(
        _ anchor: MessageKey, _ inclusive: Bool, to chunk: Chunk, _ direction: Direction
    )
        -> (MessageKey, Bool)
    {
        switch direction {
        case .previous: anchor > chunk.end ? (chunk.end, true) : (anchor, inclusive)
        case .next: anchor < chunk.start ? (chunk.start, true) : (anchor, inclusive)
        }
    }

    /// Whether a chunk's edge in `direction` is the channel's end.
    func isEnd(of chunk: Chunk, _ direction: Direction, _ view: MessageView) -> Bool {
        switch direction {
        case .previous: return chunk.start == .min
        case .next:
            guard let edge = channels[view.channelURL]?.newestKnown else { return false }
            return chunk.contains(edge)
        }
    }

    func markExhausted(_ view: MessageView, _ direction: Direction, chunk: Chunk) {
        switch direction {
        case .previous:
            view.bounds.reachOldest(upperIfUnset: view.previousReadTop(in: chunk))
        case .next:
            view.bounds.reachNewest(at: chunk.end)
            if (try? isFollowingLive(view)) != true { startCatchUp(view.channelURL) }
        }
    }
}
