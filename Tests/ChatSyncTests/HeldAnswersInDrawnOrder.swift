import ChatSyncTesting

@testable import ChatSync

extension SimulatedChatServer {
    /// Lets the held read and write answers through one at a time, each time any held one
    /// (up to `limit` of them), then all the rest: answers made in one order reach the
    /// client in another. Each one let through may let a new request in (a lane's next
    /// message, a fetch's next page), which joins the draw. Answers how many were let
    /// through while an older one of their kind stayed held.
    func releaseHeldAnswersInDrawnOrder(limit: Int = 16, random: inout SeededGenerator, log: inout [String]) async -> Int {
        var crossed = 0
        for _ in 0..<limit {
            let (reads, writes) = (heldReadAnswerCount, heldWriteAnswerCount)
            guard reads + writes > 0 else { break }
            let pick = Int.random(in: 0..<(reads + writes), using: &random)
            if pick < reads {
                releaseReadAnswer(at: pick)
                log.append("  a read's answer (\(pick + 1) of \(reads), \(writes) writes held)")
            } else {
                releaseWriteAnswer(at: pick - reads)
                log.append("  a write's answer (\(pick - reads + 1) of \(writes), \(reads) reads held)")
            }
            if pick != 0 && pick != reads { crossed += 1 }
            for _ in 0..<Int.random(in: 0...40, using: &random) { await Task.yield() }
        }
        releaseReadAnswers()
        releaseWriteAnswers()
        return crossed
    }
}
