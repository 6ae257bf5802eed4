import Observation

/// A ``ChannelCollection`` as an `@Observable` model for SwiftUI (or any Observation user).
///
/// ``channels`` follows the collection's list through a subscription of its own (see
/// ``ChannelCollection/events``), on the main actor; the loading state, `hasMore` and the
/// last error come from ``loadNextPage()``. It imports no UI framework.
///
/// ```swift
/// struct ChannelListScreen: View {
///     @State var model: ChannelCollectionModel
///
///     var body: some View {
///         List {
///             ForEach(model.channels, id: \.channelURL) { Text($0.name) }
///             if model.hasMore {
///                 ProgressView().task { await model.loadNextPage() }
///             }
///         }
///     }
/// }
/// // ChannelListScreen(model: ChannelCollectionModel(collection: list))
/// ```
///
/// ``channels`` changes a moment after the collection does (one hop to the main actor).
/// ``loadNextPage()`` returns once it shows the page, and ``catchUp()`` waits until it
/// shows every change made before it was called. The model owns its collection.
@MainActor
@Observable
public final class ChannelCollectionModel {
    /// The collection the model follows.
    public let collection: ChannelCollection
    /// The loaded channels, in the query's order, as in ``ChannelCollection/channels``.
    public private(set) var channels: [Channel] = []
    /// A ``loadNextPage()`` is running.
    public private(set) var isLoading = false
    /// Whether more channels may remain: `true` until a ``loadNextPage()`` reports the end.
    /// A load that ran out of cached channels offline reports the end too; once online,
    /// the service's page after them arrives by itself, and this turns `true` again if
    /// the service has more.
    public private(set) var hasMore = true
    /// Counts loads, so that a check of `hasMore` started before a load never overrides it.
    private var loads = 0
    /// The error of the last load that failed; cleared by the next load that succeeds.
    public private(set) var lastError: (any Error)?

    private let subscription: ModelSubscription<ChannelCollectionEvent>

    /// Follows `collection` from its current channels on.
    public init(collection: ChannelCollection) {
        self.collection = collection
        let (engine, id) = (collection.engine, collection.id)
        subscription = ModelSubscription(
            subscribe: { await engine.subscribe(toChannelView: id, $0) },
            mark: { await engine.mark($0, ofChannelView: id, $1) },
            unsubscribe: { await engine.unsubscribe($0, fromChannelView: id) })
        Task { [weak self, subscription] in await subscription.read { self?.apply($0) } }
    }

    deinit { subscription.end() }

    /// Loads the next page (``ChannelCollection/fetch()``), unless a load is running;
    /// returns once ``channels`` shows it. An error goes to ``lastError``.
    public func loadNextPage() async {
        guard !isLoading else { return }
        isLoading = true
        loads += 1
        defer { isLoading = false }
        do {
            hasMore = try await collection.fetch()
            lastError = nil
        } catch {
            lastError = error
        }
        await catchUp()
    }

    /// Returns once ``channels`` shows every change the collection made before this call.
    public func catchUp() async { await subscription.catchUp() }

    /// Channels arrived after a load reported the end: the page owed from offline, which
    /// may come with the service's word that more follow.
    private func checkForMore() {
        let (collection, load) = (collection, loads)
        Task { [weak self] in
            let more = await collection.mayHaveMore
            guard let self, more, !self.isLoading, self.loads == load else { return }
            self.hasMore = true
        }
    }

    // MARK: - Events

    /// Keeps ``channels`` in the query's order: each arrival, change or move is placed by
    /// binary search.
    private func apply(_ event: ChannelCollectionEvent) {
        guard case .channels(let action, let changed) = event else { return }
        let order = collection.query.order
        switch action {
        case .insert, .update, .move:
            let urls = Set(changed.map(\.channelURL))
            if action != .insert { channels.removeAll { urls.contains($0.channelURL) } }
            for channel in changed {
                channels.insert(channel, at: channels.partitionPoint { order.sortsBefore($0, channel) })
            }
            if action == .insert, !hasMore { checkForMore() }
        case .remove:
            let urls = Set(changed.map(\.channelURL))
            channels.removeAll { urls.contains($0.channelURL) }
        case .clear:
            channels.removeAll()
            hasMore = true  // emptied (the cache was cleared, or its channels dropped): nothing says the end is near
        }
    }
}
