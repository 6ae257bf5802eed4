// MARK: - A fresh view's newest page, completed when the channel goes live

extension SyncEngine {
    /// Whether a fresh view, just placed at the live edge of `chunk` with `shown` of its
    /// messages, may be missing part of its newest page: it holds less than a page, and
    /// messages may exist below the chunk that are newer than the newest one cached when
    /// the view opened (`known`; with nothing cached then, any message counts).
    func newestPageIsShort(_ view: MessageView, shown: Int, chunk: Chunk, known: MessageKey?) -> Bool {
        shown < view.limit && chunk.start != .min && known.map { chunk.start > $0 } ?? true
    }

    /// Completes, in the background, the newest page of a view the channel's going live
    /// left short (see ``newestPageIsShort(_:shown:chunk:known:)``): the live chunk holds
    /// only the newest batch, and a filtered view may find none of its messages there.
    /// Without this, a view opened at `.max` while offline on an empty cache showed
    /// nothing once online although its newest messages existed, until the app fetched
    /// again, which nothing on an empty screen prompts it to do.
    ///
    /// Reads older, as a `.previous` fetch would, until the page is full, the channel's
    /// oldest message or `known` is reached; it gives way to the app's own `.previous`
    /// fetch, and stops at a viewpoint reset, offline or when the service does not answer
    /// (the view then holds what it got, and the app's next fetch continues from there).
    func completeNewestPage(of view: MessageView, above known: MessageKey?) {
        let (id, generation, channelURL) = (view.id, view.generation, view.channelURL)
        runInBackground { engine in
            do { try await engine.fillNewestPage(ofView: id, generation: generation, above: known) } catch {
                await engine.logNewestPageFailure(channelURL, error)
            }
        }
    }

    private func fillNewestPage(ofView id: Int, generation: Int, above known: MessageKey?) async throws {
        guard let view = views[id] else { return }
        let fill = PageFill(generation: generation, delivered: view.succeeded.count, floor: known, yieldsToApp: true)
        _ = try await fillPage(of: view, .previous, fill)
    }

    private func logNewestPageFailure(_ channelURL: String, _ error: any Error) {
        logger.warning("completing a view's newest page in \(channelURL) failed: \(error)")
    }
}
