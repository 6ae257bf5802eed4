/// Faults a ``SimulatedChatServer`` injects into requests, drawn from its seed.
///
/// Faults apply to requests only: they never report a user offline (use
/// ``SimulatedChatServer/setOnline(_:for:)`` for that).
///
/// ```swift
/// await server.setFaults(FaultPlan(failRequestRate: 0.2, loseResponseRate: 0.1))
/// ```
public struct FaultPlan: Sendable, Hashable {
    /// The share of requests rejected with a transient error before they are applied.
    public var failRequestRate: Double
    /// The share of requests applied whose response is then lost (a transient error to the client).
    public var loseResponseRate: Double
    /// Sends with these request ids fail permanently.
    public var permanentErrorReqIds: Set<String>
    /// Sends with these texts fail permanently.
    public var permanentErrorTexts: Set<String>
    /// Real time added to every request.
    public var latency: Duration
    /// The answers of this many next look-ups are lost after they are applied, whatever the
    /// rates: a schedule that needs exactly the first few look-ups to go unanswered (and the
    /// next to be answered) uses it. The server counts it down.
    public var lostLookUpAnswers: Int
    /// Edits and deletions of these messages fail permanently (`.forbidden`), as for
    /// messages a moderator locked: a test's way to have one refused for good.
    public var lockedMessageIds: Set<Int64>

    /// Creates a plan; with no arguments, no faults.
    public init(
        failRequestRate: Double = 0, loseResponseRate: Double = 0,
        permanentErrorReqIds: Set<String> = [], permanentErrorTexts: Set<String> = [],
        latency: Duration = .zero, lostLookUpAnswers: Int = 0, lockedMessageIds: Set<Int64> = []
    ) {
        self.failRequestRate = failRequestRate
        self.loseResponseRate = loseResponseRate
        self.permanentErrorReqIds = permanentErrorReqIds
        self.permanentErrorTexts = permanentErrorTexts
        self.latency = latency
        self.lostLookUpAnswers = lostLookUpAnswers
        self.lockedMessageIds = lockedMessageIds
    }
}
