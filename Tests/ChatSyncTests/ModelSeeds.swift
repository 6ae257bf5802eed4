import Foundation

/// The seeds the model-based tests run: `MODEL_SEED=N` replays one seed alone,
/// `MODEL_SEEDS=N` runs seeds 0..<N, and CI runs 0..<200 plus the regressions.
enum ModelSeeds {
    /// Seeds beyond 200 that once found a bug, kept so CI keeps checking the fix:
    /// 1452, 1610 (a stale stray row), 1495 (a stray row past the live edge),
    /// 362 (an old subscription's event applied after resume; needs load to show).
    static let regressions: [UInt64] = [362, 1452, 1495, 1610]

    static var all: [UInt64] {
        let environment = ProcessInfo.processInfo.environment
        if let one = environment["MODEL_SEED"].flatMap(UInt64.init) { return [one] }
        let count = UInt64(environment["MODEL_SEEDS"].flatMap(Int.init) ?? 200)
        return Array(0..<count) + regressions.filter { $0 >= count }
    }
}
