import Testing

@testable import ChatSync

/// An app's fetch run in a task of its own, so that a test can act while it is out
/// (clear the cache, change the channel) and know that it began first.
///
/// Made by ``start(_:_:engine:)``, which returns only once the engine holds the fetch
/// (it read the view's state, its generation among it) or the fetch is over. Before,
/// tests started the task and waited a number of scheduler turns for a held answer:
/// another request's held answer, or a busy machine, let the step go on before the
/// fetch began, and what it then found was not what the step meant (soak seed 449:
/// a `.next` fetch that began after a clear, from the emptied view at `.max`, rightly
/// showed nothing, while the soak took it for a fetch the clear had cut off).
struct FetchUnderway {
    let task: Task<Bool, any Error>

    /// Starts the fetch and waits, by outcome, until the engine holds it or it ended.
    static func start(_ collection: MessageCollection, _ direction: Direction, engine: SyncEngine) async -> FetchUnderway {
        let ended = LockedState(false)
        let task = Task {
            defer { ended.withLock { $0 = true } }
            return try await collection.fetchSucceededMessages(direction)
        }
        let id = collection.id
        let held = await eventually { await engine.isFetching(viewId: id, direction) || ended.withLock { $0 } }
        #expect(held, "the fetch \(direction) reached the engine")
        return FetchUnderway(task: task)
    }

    /// What the fetch answered (`hasMore`), or `nil` when it threw.
    var hasMore: Bool? { get async { try? await task.value } }
}
