import ChatSync
import ChatSyncTesting
import Clocks
import Testing

@testable import ChatSync

extension TestClock<Duration> {
    /// How far the clock was moved since it was made.
    var elapsed: Duration { Instant().duration(to: now) }
}

/// Sends that meet the outcome a test set for them, each logged with the clock's time.
actor ScriptedSendOutcomes: ForwardingChatService {
    enum Outcome: Sendable, CustomStringConvertible {
        /// Refused for now (503): retryable.
        case unavailable
        /// Refused for good (the channel is frozen).
        case frozen
        /// Stored by the service.
        case stored

        var description: String {
            switch self {
            case .unavailable: "unavailable"
            case .frozen: "frozen"
            case .stored: "stored"
            }
        }
    }

    let base: any ChatService
    private let clock: TestClock<Duration>
    /// What the next send meets.
    private var next = Outcome.unavailable
    /// Every send, in order: when it came and what it met.
    private(set) var log: [(at: Duration, outcome: Outcome)] = []

    init(base: any ChatService, clock: TestClock<Duration>) {
        self.base = base
        self.clock = clock
    }

    func setNext(_ outcome: Outcome) { next = outcome }

    func sendMessage(_ request: SendMessageRequest) async throws -> Message {
        log.append((clock.elapsed, next))
        switch next {
        case .unavailable: throw ChatServiceError.transient(.unavailable, "scripted: unavailable for now")
        case .frozen: throw ChatServiceError.permanent(.frozen, "scripted: the channel is frozen")
        case .stored: return try await base.sendMessage(request)
        }
    }
}

/// Under the automatic resend policy, one message fails and is resent, by its timer and
/// by the app, on a clock the test moves in half seconds, while each send meets a drawn
/// outcome (refused for now, refused for good, stored). From the log of sends and of the
/// app's resends: every send the app did not ask for follows a retryable failure (API
/// §4.3, "non-retryable failures are never resent automatically"), at least 2 s after it,
/// and there are at most `automaticMessageResendRetryCount` of them.
///
/// Before the fix, a resend timer outlived the app's own resend: it fired 2 s after the
/// failure it was set for, which sent again a message the app's resend had meanwhile
/// seen refused for good, or sent it a second time soon after a newer failure.
@Suite("Automatic resends beside the app's own, generated")
struct AutomaticResendTimersGeneratedTests {
    static let seeds = ScheduleSeeds.automaticResends.all

    @Test(arguments: seeds)
    func onlyTheLatestRetryableFailureIsResentAutomatically(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let clock = TestClock()
        let count = Int.random(in: 1...4, using: &random)
        let (harness, sends) = try await Harness.makeWrapped(
            seed: seed,
            configure: {
                $0.clock = clock
                $0.messageResendPolicy = .automatic
                $0.automaticMessageResendRetryCount = count
                $0.sendRetryLimit = 0
            }, wrapper: { ScriptedSendOutcomes(base: $0, clock: clock) })
        let manager = harness.manager
        await harness.online()
        let reqId = try await manager.sendMessage(.text("m"), channelURL: Harness.channel).reqId
        var appResends: [Duration] = []
        var appSends: Set<Int> = []  // indices in the log of the sends the app's resends made
        var steps: [String] = []
        func state() async -> SyncState? { await manager.message(reqId: reqId)?.syncState }
        // A timer the clock woke gets turns to send, and a send under way ends in a failure
        // or a stored message. Only how soon a send is logged hangs on the turns: a late one
        // is logged at a later time of the clock, as is the failure its timer follows.
        func settled() async {
            for _ in 0..<100 { await Task.yield() }
            _ = await eventually {
                let now = await state()
                return now == .failed || now == .synced
            }
        }
        #expect(await eventually { await state() == .failed }, "seed \(seed): the first send failed")
        for step in 0..<14 {
            let outcome: ScriptedSendOutcomes.Outcome =
                switch Int.random(in: 0..<8, using: &random) {
                case 0..<5: .unavailable
                case 5, 6: .frozen
                default: .stored
                }
            await sends.setNext(outcome)
            steps.append("step \(step): next \(outcome)")
            if await state() == .failed, Int.random(in: 0..<3, using: &random) == 0 {
                let before = await sends.log.count
                do {
                    _ = try await manager.resendMessage(reqId: reqId)
                    // The message was failed and the clock stands still: no timer sends
                    // before this resend's own send, the next one in the log.
                    appSends.insert(before)
                    appResends.append(clock.elapsed)
                    steps.append("  the app resends at \(clock.elapsed)")
                    #expect(await eventually { await sends.log.count > before }, "seed \(seed): the app's resend went")
                } catch let error as SyncManagerError where error.code == .invalidParameter {
                    steps.append("  the app's resend came after the timer's")  // no longer failed
                }
                await settled()
            }
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                await clock.advance(by: .milliseconds(500))
                await settled()
            }
        }
        let log = await sends.log
        var automatic = 0
        for index in log.indices.dropFirst() {
            let (previous, current) = (log[index - 1], log[index])
            // A send the app's resend made may follow any failure; the one after it is
            // checked against it (a timer that outlived the resend sent right after).
            if appSends.contains(index) { continue }
            automatic += 1
            let sends = log.map { "\($0.at) \($0.outcome)" }
            let context =
                "seed \(seed): send \(index) at \(current.at), after \(previous.outcome) at \(previous.at); \(sends); app resends \(appResends); \(steps)"
            #expect(previous.outcome == .unavailable, "\(context): only a retryable failure is resent automatically")
            #expect(current.at - previous.at >= .seconds(2), "\(context): no sooner than 2 s after the failure it follows")
        }
        #expect(automatic <= count, "seed \(seed): \(automatic) automatic resends, at most \(count)")
        await manager.close()
    }
}
