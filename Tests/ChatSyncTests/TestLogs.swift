import Foundation
import Logging
import Testing

@testable import ChatSync

/// Keeps the library's logs out of the test output: each test case's logs go to its own
/// bounded buffer (``LogCapture``), printed only when that test throws. `TEST_LOGS=print`
/// streams every log line, debug ones included, to standard error instead, for
/// replaying a failing seed.
///
/// Swift Testing tells a trait when a test throws, not when one of its expectations
/// failed; a seeded test that fails an expectation names its seed, and the seed replayed
/// with `TEST_LOGS=print` shows the logs.
enum TestLogs {
    /// The buffer of the test case running on this task (and the tasks it started).
    @TaskLocal static var capture: LogCapture?

    static let printsEverything = ProcessInfo.processInfo.environment["TEST_LOGS"] == "print"

    /// Routes every `Logger` made from now on through ``CapturingLogHandler``. Runs once,
    /// before the first test body: every suite carries ``CapturesLogs``.
    static let bootstrapped: Void = LoggingSystem.bootstrap { label in CapturingLogHandler(label: label) }
}

/// The last log lines of one test case; older lines are dropped past ``limit``.
final class LogCapture: Sendable {
    static let limit = 400
    private let lines = LockedState<(kept: [String], dropped: Int)>(([], 0))

    func append(_ line: String) {
        lines.withLock { state in
            if state.kept.count == Self.limit {
                state.kept.removeFirst(Self.limit / 4)
                state.dropped += Self.limit / 4
            }
            state.kept.append(line)
        }
    }

    /// The kept lines, preceded by a count of the dropped ones.
    var text: String {
        lines.withLock { state in
            ((state.dropped > 0 ? ["… \(state.dropped) earlier lines dropped"] : []) + state.kept).joined(separator: "\n")
        }
    }

    var isEmpty: Bool { lines.withLock { $0.kept.isEmpty } }
}

/// A log handler that writes to the current test case's ``LogCapture``.
struct CapturingLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = TestLogs.printsEverything ? .debug : .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = "\(event.level) \(label): \(event.message)"
        if TestLogs.printsEverything {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        } else {
            // Outside any test case (a detached task, a finished test's leftovers): dropped.
            TestLogs.capture?.append(line)
        }
    }
}

/// Gives each test case of a suite its own log buffer, and prints it when the test throws.
struct CapturesLogs: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        _ = TestLogs.bootstrapped
        let capture = LogCapture()
        do {
            try await TestLogs.$capture.withValue(capture) { try await function() }
        } catch {
            if !capture.isEmpty {
                FileHandle.standardError.write(Data("── logs of \(test.name), which threw \(error):\n\(capture.text)\n──\n".utf8))
            }
            throw error
        }
    }
}

extension Trait where Self == CapturesLogs {
    /// Captures the library's logs per test case (see ``TestLogs``).
    static var capturingLogs: Self { Self() }
}
