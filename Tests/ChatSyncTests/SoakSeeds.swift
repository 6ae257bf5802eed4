import Foundation

/// The schedules the simulation soak runs: `SOAK_SEED=N` replays one alone,
/// `SOAK_SEEDS=N` runs seeds 0..<N; by default (and in CI) 1,000, plus the regressions.
enum SoakSeeds {
    /// Seeds beyond the default range that once found a bug, kept so CI keeps checking the fix:
    /// 2416 (a lost change-log request after reconnecting was never retried).
    static let regressions: [UInt64] = [2416]

    static var all: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["SOAK_SEED"].flatMap(UInt64.init) { return [one] }
        let count = UInt64(environment["SOAK_SEEDS"].flatMap(Int.init) ?? 1_000)
        return Array(0..<count) + regressions.filter { $0 >= count }
    }
}
