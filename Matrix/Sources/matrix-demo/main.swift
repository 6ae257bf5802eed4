import ChatSync
import ChatSyncMatrix
import Foundation
import Logging
import SynapseHarness

// The narrated story of ChatSync against a real Matrix homeserver: Synapse, started
// here on a free loopback port from the virtual environment `scripts/synapse.sh install`
// made, and removed at the end.

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .error
    return handler
}

guard Synapse.isInstalled else {
    print("Synapse is not installed. Run: bash Matrix/scripts/synapse.sh install")
    exit(1)
}

do {
    try await MatrixDemo.run()
    print("Done")
} catch {
    print("The demo failed: \(error)")
    exit(1)
}
