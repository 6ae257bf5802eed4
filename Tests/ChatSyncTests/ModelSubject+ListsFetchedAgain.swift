import ChatSyncTesting
import Testing

@testable import ChatSync

/// One of the collections under a generator fetches its pending and failed lists again,
/// in either order, as an app does on a pull to refresh or a screen shown again: what it
/// already lists must not be listed twice, and a failed message being resent stays in the
/// failed list (API §4.3). Drawn one step in four from the generator's own `random`.
func listsFetchedAgain(_ subjects: [ModelSubject], random: inout SeededGenerator, log: inout [String]) async throws {
    guard Int.random(in: 0..<4, using: &random) == 0, let subject = subjects.randomElement(using: &random) else { return }
    if Bool.random(using: &random) {
        try await subject.collection.fetchPendingMessages()
        try await subject.collection.fetchFailedMessages()
        log.append("lists fetched again for \(subject.filter)")
    } else {
        try await subject.collection.fetchFailedMessages()
        try await subject.collection.fetchPendingMessages()
        log.append("lists fetched again, failed first, for \(subject.filter)")
    }
}

/// The reqIds a pending list shows that belong in the failed list: failed, or failed and
/// being resent (API §4.3).
func listedPendingButFailed(_ pending: [Message], outbox: [OutboxEntry]) -> [String] {
    let failedCare = Set(outbox.filter(\.isInFailedList).map(\.reqId))
    return pending.map(\.reqId).filter(failedCare.contains)
}

/// Every collection of a channel lists a message alike, whenever and however it joined
/// (sent, fetched, awaiting its echo, answered on a resend): in the same list, pending or
/// failed, with the same `createdAt`, and in the same order among the messages both
/// list (messages created in one millisecond included).
func checkListedAlike(
    pending: [[Message]], failed: [[Message]], context: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    for lists in [pending, failed] {
        var times: [String: Set<Int64>] = [:]
        for list in lists { for message in list { times[message.reqId, default: []].insert(message.createdAt) } }
        let differing = times.filter { $0.value.count > 1 }
        #expect(
            differing.isEmpty, "collections list a message with different times: \(differing) \(context)", sourceLocation: sourceLocation)
    }
    // Equal times leave the order to the ties: those must fall alike too.
    for lists in [pending, failed] {
        for (index, list) in lists.enumerated() {
            for other in lists[(index + 1)...] {
                let shared = Set(list.map(\.reqId)).intersection(other.map(\.reqId))
                let order = list.map(\.reqId).filter(shared.contains)
                let otherOrder = other.map(\.reqId).filter(shared.contains)
                #expect(
                    order == otherOrder, "collections order their messages differently: \(order) and \(otherOrder) \(context)",
                    sourceLocation: sourceLocation)
            }
        }
    }
    let both = Set(pending.joined().map(\.reqId)).intersection(failed.joined().map(\.reqId))
    #expect(both.isEmpty, "pending in one collection, failed in another: \(both) \(context)", sourceLocation: sourceLocation)
}

/// ``checkListedAlike(pending:failed:context:sourceLocation:)`` over the lists of `subjects`
/// (collections of one channel).
func checkListedAlike(_ subjects: [ModelSubject], context: String, sourceLocation: SourceLocation = #_sourceLocation) async {
    var pendingLists: [[Message]] = []
    var failedLists: [[Message]] = []
    for subject in subjects {
        pendingLists.append(await subject.collection.pendingMessages)
        failedLists.append(await subject.collection.failedMessages)
    }
    checkListedAlike(pending: pendingLists, failed: failedLists, context: context, sourceLocation: sourceLocation)
}
