import ChatSync
import Foundation
import Logging

// chatsync-bench: measures ChatSync against the raw SQLite C API on the same machine and
// files, and prints a Markdown table (`--quick` for a CI-sized run; no timing is asserted).

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .error
    return handler
}
let arguments = CommandLine.arguments
if let index = arguments.firstIndex(of: "--memory-probe"), index + 1 < arguments.count {
    // Child process of scenario 6: run scenario 3's walk, print the peak resident memory.
    resetPeakResidentMemory()
    _ = try await Scenarios.scrollPages(file: arguments[index + 1], walks: 3)
    print(peakResidentKilobytes())
    exit(0)
}

if let index = arguments.firstIndex(of: "--channel-list-probe"), index + 1 < arguments.count {
    // Child process of scenario 8d: page a channel list, print the peak resident memory.
    resetPeakResidentMemory()
    try await Scenarios.pageChannelList(file: arguments[index + 1])
    print(peakResidentKilobytes())
    exit(0)
}

let quick = arguments.contains("--quick")
let recordIndex = arguments.firstIndex(of: "--record")
if recordIndex != nil, quick || arguments.contains("--only") {
    FileHandle.standardError.write(Data("chatsync-bench: --record takes a full run of every scenario (no --quick, no --only)\n".utf8))
    exit(2)
}
let sizes = quick ? Sizes.quick : Sizes()
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chatsync-bench-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let scenarios = Scenarios(sizes: sizes, directory: directory)

// `--only NAME` runs one scenario (ingest, first-page, scroll, send, relaunch, memory,
// bounded-ingest, channel-list, live-fan-in, app-start, change-logs), for profiling.
let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
func wanted(_ name: String) -> Bool { only == nil || only == name }
var results: [Result] = []
if wanted("ingest") { results.append(try await scenarios.ingest()) }
if wanted("first-page") { results += try await scenarios.firstPage() }
if wanted("scroll") { results.append(try await scenarios.scroll()) }
if wanted("send") { results += try await scenarios.send() }
if wanted("relaunch") { results.append(try await scenarios.relaunch()) }
if wanted("memory") { results.append(try await scenarios.memory(executable: URL(fileURLWithPath: arguments[0]).path)) }
if wanted("bounded-ingest") { results.append(try await scenarios.boundedIngest()) }
if wanted("channel-list") { results += try await scenarios.channelList(executable: URL(fileURLWithPath: arguments[0]).path) }
if wanted("live-fan-in") { results += try await scenarios.liveFanIn() }
if wanted("app-start") { results.append(try await scenarios.appStart()) }
if wanted("change-logs") { results.append(try await scenarios.changeLogsAfterADayOffline()) }

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

// `--record FILE` appends this run's table to the results history (Benchmarks/results.md),
// under the date, the commit and the machine; scripts/plot-bench-history.sh draws it.
if let index = recordIndex, index + 1 < arguments.count {
    let heading = "## \(date), commit \(RunContext.commit()), \(RunContext.machine())"
    let section = "\n\(heading)\n\n\(table.joined(separator: "\n"))\n"
    let file = arguments[index + 1]
    guard let handle = FileHandle(forWritingAtPath: file) else { throw BenchError("cannot append to \(file)") }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(section.utf8))
    try handle.close()
    print("\nappended to \(file)")
}
