import ChatSyncTesting

@testable import ChatSync

/// Runs `body` while the server holds its read and write answers, and lets every held
/// one through if `body` throws: a crossed-answers step opens so, and lets the answers
/// through with ``SimulatedChatServer/releaseHeldAnswersInDrawnOrder(limit:random:log:)``
/// before it returns. (A held answer left parked would stall the next seed's requests.)
func withAnswersHeld<T>(on server: SimulatedChatServer, _ body: () async throws -> T) async throws -> T {
    await server.holdReadAnswers()
    await server.holdWriteAnswers()
    do {
        return try await body()
    } catch {
        await server.releaseAllAnswers()
        throw error
    }
}

extension SimulatedChatServer {
    /// Lets the held read and write answers through one at a time, each time any held one
    /// (up to `limit` of them), then all the rest: answers made in one order reach the
    /// client in another. Each one let through may let a new request in (a lane's next
    /// message, a fetch's next page), which joins the draw. Answers how many reads and
    /// how many writes were let through while an older one of their kind stayed held.
    ///
    /// How many answers are held when it starts depends on how far the requests got, so
    /// the number of draws does too: callers give it a generator of the step's own, which
    /// keeps the schedule's later draws what the seed made them.
    func releaseHeldAnswersInDrawnOrder(
        limit: Int = 16, random: inout SeededGenerator, log: inout [String]
    ) async -> (reads: Int, writes: Int) {
        var crossed = (reads: 0, writes: 0)
        for _ in 0..<limit {
            let (reads, writes) = (heldReadAnswerCount, heldWriteAnswerCount)
            guard reads + writes > 0 else { break }
            let pick = Int.random(in: 0..<(reads + writes), using: &random)
            if pick < reads {
                releaseReadAnswer(at: pick)
                if pick > 0 { crossed.reads += 1 }
                log.append("  a read's answer (\(pick + 1) of \(reads), \(writes) writes held)")
            } else {
                releaseWriteAnswer(at: pick - reads)
                if pick > reads { crossed.writes += 1 }
                log.append("  a write's answer (\(pick - reads + 1) of \(writes), \(reads) reads held)")
            }
            for _ in 0..<Int.random(in: 0...40, using: &random) { await Task.yield() }
        }
        releaseAllAnswers()
        return crossed
    }

    /// Lets every held read and write answer through: the end of a step that held them,
    /// also when it throws half-way (a held answer would otherwise stay parked).
    func releaseAllAnswers() {
        releaseReadAnswers()
        releaseWriteAnswers()
    }
}
