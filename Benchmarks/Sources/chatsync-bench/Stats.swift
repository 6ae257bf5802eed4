import Foundation

/// Durations in microseconds, and what the table prints of them.
struct Sample {
    var values: [Double]

    var median: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }

    func percentile(_ fraction: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded(.up)))
        return sorted[index]
    }
}

extension Duration {
    var microseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1_000_000 + Double(attoseconds) / 1_000_000_000_000
    }
}

/// Times `body` in microseconds.
func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return start.duration(to: clock.now).microseconds
}

func format(_ microseconds: Double) -> String {
    if microseconds >= 1_000_000 { return String(format: "%.2f s", microseconds / 1_000_000) }
    if microseconds >= 1_000 { return String(format: "%.2f ms", microseconds / 1_000) }
    return String(format: "%.0f µs", microseconds)
}

/// Forgets the peak resident memory so far, where the system allows it: on Linux a spawned
/// process starts with its parent's peak, which would hide its own.
func resetPeakResidentMemory() {
    #if os(Linux)
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    #endif
}

/// Peak resident memory of this process since the last reset, in kilobytes.
func peakResidentKilobytes() -> Int {
    #if os(Linux)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        {
            return kilobytes
        }
    #endif
    var usage = rusage()
    #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage.ru_maxrss
}
