import ArgumentParser
import ChatSync
import Foundation
import Logging

/// chatsync-bench: measures ChatSync against the raw SQLite C API on the same machine and
/// files, and prints a Markdown table. No timing is asserted anywhere.
@main
struct ChatSyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chatsync-bench",
        abstract: "Measures ChatSync against the same work done with the raw SQLite C API, and prints a Markdown table.",
        discussion: "Build in release: swift run -c release --package-path Benchmarks chatsync-bench")

    /// The scenarios `--only` can pick, by their command-line names.
    enum Scenario: String, CaseIterable, ExpressibleByArgument {
        case ingest, firstPage = "first-page", scroll, send, relaunch, memory, boundedIngest = "bounded-ingest"
        case channelList = "channel-list", liveFanIn = "live-fan-in", appStart = "app-start", changeLogs = "change-logs"
    }

    @Flag(help: "A CI-sized run: small caches, few repetitions.")
    var quick = false

    @Option(help: ArgumentHelp("Run one scenario only, for profiling.", valueName: "scenario"))
    var only: Scenario?

    @Option(help: ArgumentHelp("Append this run's table to a results file (a full run only).", valueName: "file"))
    var record: String?

    @Option(help: .hidden)
    var memoryProbe: String?

    @Option(help: .hidden)
    var channelListProbe: String?

    func validate() throws {
        if record != nil, quick || only != nil {
            throw ValidationError("--record takes a full run of every scenario (no --quick, no --only)")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        if try await runProbe() { return }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatsync-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenarios = Scenarios(sizes: quick ? Sizes.quick : Sizes(), directory: directory)

        func wanted(_ scenario: Scenario) -> Bool { only == nil || only == scenario }
        var results: [Result] = []
        if wanted(.ingest) { results.append(try await scenarios.ingest()) }
        if wanted(.firstPage) { results += try await scenarios.firstPage() }
        if wanted(.scroll) { results.append(try await scenarios.scroll()) }
        if wanted(.send) { results += try await scenarios.send() }
        if wanted(.relaunch) { results.append(try await scenarios.relaunch()) }
        if wanted(.memory) { results.append(try await scenarios.memory(executable: executable)) }
        if wanted(.boundedIngest) { results.append(try await scenarios.boundedIngest()) }
        if wanted(.channelList) { results += try await scenarios.channelList(executable: executable) }
        if wanted(.liveFanIn) { results += try await scenarios.liveFanIn() }
        if wanted(.appStart) { results.append(try await scenarios.appStart()) }
        if wanted(.changeLogs) { results.append(try await scenarios.changeLogsAfterADayOffline()) }

        let date = ISO8601DateFormatter().string(from: Date()).prefix(10)
        var table = [
            "| scenario | ChatSync (median) | raw SQLite (median) | ratio | target | met |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for result in results {
            let met = result.met.map { $0 ? "yes" : "no" } ?? ""
            table.append("| \(result.scenario) | \(result.ours) | \(result.baseline) | \(result.ratio) | \(result.target) | \(met) |")
        }
        print("ChatSync benchmarks, \(date), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(quick ? "quick run" : "full run")\n")
        print(table.joined(separator: "\n"))

        // The results history (Benchmarks/results.md), under the date, the commit and the
        // machine; scripts/plot-bench-history.sh draws it.
        if let file = record {
            let heading = "## \(date), commit \(RunContext.commit()), \(RunContext.machine())"
            let section = "\n\(heading)\n\n\(table.joined(separator: "\n"))\n"
            guard let handle = FileHandle(forWritingAtPath: file) else { throw BenchError("cannot append to \(file)") }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(section.utf8))
            try handle.close()
            print("\nappended to \(file)")
        }
    }

    /// The child processes of scenarios 6 and 8d: walk a cache, print the peak resident
    /// memory. Answers whether this run was one.
    private func runProbe() async throws -> Bool {
        if let file = memoryProbe {
            resetPeakResidentMemory()
            _ = try await Scenarios.scrollPages(file: file, walks: 3)
        } else if let file = channelListProbe {
            resetPeakResidentMemory()
            try await Scenarios.pageChannelList(file: file)
        } else {
            return false
        }
        print(peakResidentKilobytes())
        return true
    }
}
