import Foundation

/// What a recorded run names besides its date: the commit measured and the machine.
enum RunContext {
    /// The short commit of the working directory, marked when its code has uncommitted
    /// changes. Only the code counts: the results file itself, the README and the plot
    /// change with every recorded run and made each run after the first look uncommitted.
    static func commit() -> String {
        guard let head = git("rev-parse", "--short", "HEAD") else { return "unknown" }
        // From the repository's top, wherever the benchmark runs from.
        let code = ["Package.swift", "Sources", "Benchmarks/Package.swift", "Benchmarks/Sources"].map { ":(top)\($0)" }
        guard let changes = git(["status", "--porcelain", "--untracked-files=no", "--"] + code) else {
            return "\(head), uncommitted changes unknown"
        }
        return changes.isEmpty ? head : "\(head) with uncommitted changes"
    }

    /// The processor's model and the core count, as Linux reports them.
    static func machine() -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
        return "\(cores) cores, \(model ?? "unknown processor")"
    }

    private static func git(_ arguments: String...) -> String? { git(arguments) }

    private static func git(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
