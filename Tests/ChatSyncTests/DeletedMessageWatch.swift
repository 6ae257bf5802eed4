import ChatSync
import Testing

/// Watches a schedule's collections for a deleted message coming back, even for a moment.
///
/// A step that settled online leaves the engine knowing every deletion made so far (real
/// time, or the change logs of a return; a history dropped for an expired token takes
/// the rest). From then on no answer may bring one of those messages back into a view:
/// an answer made before a deletion yields to it. A check after settling sees a message
/// that stays back; this one also sees one that a later event removes again.
struct DeletedMessageWatch {
    /// Every message id the service was seen holding at a settled online step.
    private var seen: Set<Int64> = []
    /// Of those, the ones the service no longer held at the last settled online step.
    private var gone: Set<Int64> = []
    /// How many of each recorder's events were scanned already.
    private var scanned: [ObjectIdentifier: Int] = [:]

    /// Fails every insertion or update of a message in `gone` since the last check, in
    /// each subject's events; then, when the step settled online, learns what the
    /// service deleted so far (`serverMessages` being everything it holds now).
    mutating func check(
        _ subjects: [ModelSubject], settledOnline: Bool, serverMessages: [Message], context: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for subject in subjects {
            let events = subject.recorder.events
            let key = ObjectIdentifier(subject.recorder)
            let start = min(scanned[key] ?? 0, events.count)
            var back: Set<Int64> = []
            for case .succeeded(let action, let messages) in events[start...] where action == .insert || action == .update {
                back.formUnion(messages.map(\.messageId).filter(gone.contains))
            }
            #expect(
                back.isEmpty,
                "\(subject.filter): messages deleted before the last settled online step came back: \(back.sorted()) \(context())",
                sourceLocation: sourceLocation)
            scanned[key] = events.count
        }
        guard settledOnline else { return }
        let held = Set(serverMessages.map(\.messageId))
        seen.formUnion(held)
        gone = seen.subtracting(held)
    }
}
