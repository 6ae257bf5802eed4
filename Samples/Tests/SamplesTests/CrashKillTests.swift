import ChatServer
import ChatSync
import ChatSyncTesting
import Foundation
import GRDB
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The crash-kill soak: the `crash-sender` helper sends a scripted stream of messages
/// from a database file to the reference server on loopback; the test kills it with
/// SIGKILL at seeded random moments, starts it again on the same file each time, and
/// at the end checks that the server holds every scripted message exactly once, in
/// lane order, and that the outbox is empty.
///
/// `CRASH_KILLS=N` kills N times (30 by default); `CRASH_SEED=N` picks other moments.
@Suite("Crash-kill soak", .serialized)
struct CrashKillTests {
    static let environment = ProcessInfo.processInfo.environment
    static let kills = environment["CRASH_KILLS"].flatMap(Int.init) ?? 30
    static let seed = environment["CRASH_SEED"].flatMap(UInt64.init) ?? 1
    static let scriptLength = 400

    /// The helper, built next to this test binary (the test target depends on it).
    static var helperPath: String {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for directory in [besideTests, besideTests.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent("crash-sender").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/debug/crash-sender").path
    }

    /// One run of the helper: started, then killed after `killAfter` (or left to finish).
    struct Run {
        let lines: [String]
        let exitStatus: Int32
        let killed: Bool
    }

    func runHelper(_ arguments: [String], killAfter: Duration?, timeout: Duration = .seconds(120)) async throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.helperPath)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // Read while it runs, so a full pipe never blocks the helper.
        let reader = Task.detached { output.fileHandleForReading.readDataToEndOfFile() }
        let limit = killAfter ?? timeout
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        while process.isRunning && clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        var killed = false
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            killed = true
        }
        process.waitUntilExit()
        let text = String(decoding: await reader.value, as: UTF8.self)
        return Run(lines: text.split(separator: "\n").map(String.init), exitStatus: process.terminationStatus, killed: killed)
    }

    @Test func everyScriptedMessageArrivesOnceInLaneOrderAcrossKills() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.helperPath), "crash-sender is built at \(Self.helperPath)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("crash-kill-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try ChatServer(databasePath: directory.appendingPathComponent("server.sqlite").path)
        let token = try server.addUser("alice")
        _ = try server.addUser("bob")
        _ = try await server.createChannel("crash", members: ["alice", "bob"])
        let running = try await server.start()
        let photo = directory.appendingPathComponent("photo.png")
        try Data(repeating: 3, count: 20_000).write(to: photo)
        let database = directory.appendingPathComponent("alice.sqlite").path
        let arguments = [running.baseURL, token, database, "crash", String(Self.scriptLength), photo.path]

        var random = SeededGenerator(seed: Self.seed)
        var everFailed: Set<String> = []
        var dropped: [String] = []
        var killsLanded = 0
        var killsAmongOperations = 0  // kills after the helper had queued edits or deletions
        var log: [String] = []
        for round in 0..<Self.kills {
            let delay = Duration.milliseconds(Int.random(in: 40...440, using: &random))
            let run = try await runHelper(arguments, killAfter: delay)
            everFailed.formUnion(run.lines.filter { $0.hasPrefix("FAILED ") }.map { String($0.dropFirst(7)) })
            dropped += run.lines.filter { $0.hasPrefix("DROPPED ") }
            let accepted = run.lines.filter { $0.hasPrefix("ACCEPTED ") }.count
            let operations = run.lines.filter { $0.hasPrefix("EDITED ") || $0.hasPrefix("DELETED ") }.count
            if run.killed && operations > 0 { killsAmongOperations += 1 }
            log.append("#\(round) \(delay): \(run.killed ? "killed" : "exit \(run.exitStatus)") after \(accepted) accepted")
            if run.killed { killsLanded += 1 } else { #expect(run.exitStatus == 0, "the helper failed: \(run.lines.suffix(5))") }
        }
        let last = try await runHelper(arguments, killAfter: nil)
        everFailed.formUnion(last.lines.filter { $0.hasPrefix("FAILED ") }.map { String($0.dropFirst(7)) })
        dropped += last.lines.filter { $0.hasPrefix("DROPPED ") }
        #expect(dropped.isEmpty, "the failed list's limits dropped messages: \(dropped)")
        #expect(last.lines.last == "DONE", "the last run finished: \(last.lines.suffix(5)); \(log)")
        #expect(killsLanded >= Self.kills * 2 / 3, "most kills landed while the helper ran: \(log)")

        print(
            "Crash-kill soak: \(killsLanded) of \(Self.kills) kills landed while the helper ran; \(everFailed.count) messages failed at some point and were resent; \(killsAmongOperations) kills came after edits or deletions were queued"
        )
        let storedNow = try server.messages(in: "crash").map(\.text)
        let script = (0..<Self.scriptLength).map { "m\($0)" }
        // The helper edits text message i to "m<i>+" when i % 5 == 1 and deletes it when i % 5 == 2.
        let edits = Set(script.enumerated().filter { $0.offset % 4 != 3 && $0.offset % 5 == 1 }.map(\.element))
        let deletions = Set(script.enumerated().filter { $0.offset % 4 != 3 && $0.offset % 5 == 2 }.map(\.element))
        #expect(storedNow.filter { $0.hasSuffix("+") }.count == edits.count, "every edit applied: \(log)")
        #expect(Set(storedNow).isDisjoint(with: deletions), "every deletion applied: \(log)")
        #expect(Set(storedNow).isDisjoint(with: edits), "no edited message kept its old text: \(log)")
        let stored = storedNow.map { $0.hasSuffix("+") ? String($0.dropLast()) : $0 }
        let survivors = script.filter { !deletions.contains($0) }
        #expect(stored.count == Set(stored).count, "nothing doubled: \(stored.count - Set(stored).count) duplicates; \(log)")
        #expect(Set(stored) == Set(survivors), "nothing lost: missing \(Set(survivors).subtracting(stored).sorted()); \(log)")
        // Lane order, for the messages never failed (a resent one joins its lane's tail, API.md §4.3).
        for lane in [0, 1] {
            let expected = script.enumerated().filter { ($0.offset % 4 == 3 ? 1 : 0) == lane && !everFailed.contains($0.element) }
                .map(\.element).filter { !deletions.contains($0) }
            #expect(stored.filter(expected.contains) == expected, "lane \(lane) in order; failed ones: \(everFailed.sorted())")
        }
        // Exactly once, observed on the server: each edit and deletion the helper asked for
        // is one operation (its id rides every try, across kills), applied to one message.
        let applied = try server.appliedOperations()
        #expect(applied.count == edits.count + deletions.count, "one operation per edit and deletion: \(applied.count); \(log)")
        #expect(Set(applied.map(\.messageId)).count == applied.count, "no message changed by two operations: \(log)")
        print("Crash-kill soak: \(applied.filter { $0.requests > 1 }.count) operations were sent more than once and applied once")
        let queue = try DatabaseQueue(path: database)
        let outboxRows = try await queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM outbox") }
        #expect(outboxRows == 0, "the outbox is empty")
        let operationRows = try await queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM outbox_operation") }
        #expect(operationRows == 0, "no edit or deletion is left")
        await running.stop()
    }
}
