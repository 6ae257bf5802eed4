/// A small, fast, seeded random number generator (SplitMix64): the same seed gives
/// the same sequence on every machine, so simulations and model tests replay exactly.
///
/// ```swift
/// var random = SeededGenerator(seed: 42)
/// let roll = Int.random(in: 1...6, using: &random)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `true` with probability `rate` (0 never draws).
    public mutating func chance(_ rate: Double) -> Bool {
        guard rate > 0 else { return false }
        return Double(next() >> 11) / Double(1 << 53) < rate
    }
}
