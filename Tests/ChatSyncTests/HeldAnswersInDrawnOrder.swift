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

/// How many answers a crossed-answers step let through ahead of older ones still held.
struct AnswersCrossed: Sendable, Equatable {
    /// Read answers let through while an older read answer stayed held.
    var reads = 0
    /// Write answers let through while an older write answer stayed held.
    var writes = 0
    /// Answers let through while an older answer of the other kind stayed held: an edit's
    /// answer before a page made first, or a page before an older send's answer.
    var acrossKinds = 0

    static func += (total: inout AnswersCrossed, more: AnswersCrossed) {
        total.reads += more.reads
        total.writes += more.writes
        total.acrossKinds += more.acrossKinds
    }
}

extension ScheduleSeeds {
    /// Runs the schedules of batch `index` of `count` (as ``run(batch:of:_:)``), each
    /// answering what its crossed-answers steps crossed, and answers their sum; nil for a
    /// batch under 50 seeds (as under the sanitizers), too few to be sure to draw the step.
    ///
    /// How many requests reach the service before the answers go depends on the machine,
    /// so one schedule may cross nothing; a batch of 50 that crossed nothing of a kind its
    /// step can cross means the step is broken, and its checks prove nothing.
    func runCountingCrossings(
        batch index: Int, of count: Int, _ schedule: (UInt64) async throws -> AnswersCrossed
    ) async -> AnswersCrossed? {
        let crossed = LockedState(AnswersCrossed())
        await run(batch: index, of: count) { seed in
            let more = try await schedule(seed)
            crossed.withLock { $0 += more }
        }
        return batch(index, of: count).count >= 50 ? crossed.withLock { $0 } : nil
    }
}

extension SimulatedChatServer {
    /// Lets the held read and write answers through one at a time, each time any held one
    /// (up to `limit` of them), then all the rest: answers made in one order reach the
    /// client in another. Each one let through may let a new request in (a lane's next
    /// message, a fetch's next page), which joins the draw. Answers how many were let
    /// through while an older one stayed held, of their kind and of the other.
    ///
    /// How many answers are held when it starts depends on how far the requests got, so
    /// the number of draws does too: callers give it a generator of the step's own, which
    /// keeps the schedule's later draws what the seed made them.
    func releaseHeldAnswersInDrawnOrder(
        limit: Int = 16, random: inout SeededGenerator, log: inout [String]
    ) async -> AnswersCrossed {
        var crossed = AnswersCrossed()
        for _ in 0..<limit {
            let (readTickets, writeTickets) = (heldReadAnswerTickets, heldWriteAnswerTickets)
            let (reads, writes) = (readTickets.count, writeTickets.count)
            guard reads + writes > 0 else { break }
            let pick = Int.random(in: 0..<(reads + writes), using: &random)
            if pick < reads {
                releaseReadAnswer(at: pick)
                if pick > 0 { crossed.reads += 1 }
                if let oldestWrite = writeTickets.first, oldestWrite < readTickets[pick] { crossed.acrossKinds += 1 }
                log.append("  a read's answer (\(pick + 1) of \(reads), \(writes) writes held)")
            } else {
                releaseWriteAnswer(at: pick - reads)
                if pick > reads { crossed.writes += 1 }
                if let oldestRead = readTickets.first, oldestRead < writeTickets[pick - reads] { crossed.acrossKinds += 1 }
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
