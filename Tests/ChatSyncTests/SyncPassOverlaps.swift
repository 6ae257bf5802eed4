@testable import ChatSync

/// Counts the passes of the reconnect sync that started while another pass of the same
/// connection (of the same manager) ran. ``Harness`` hands it to every manager it opens
/// (``SyncEngine/syncPassWitness``), so a generator can check that one connection's
/// passes never overlap without trusting the engine's own schedule.
final class SyncPassOverlaps: Sendable {
    private struct Connection: Hashable {
        var manager: Int
        var epoch: Int
    }

    private struct Tally {
        var running: [Connection: Int] = [:]
        var overlaps = 0
        var passes = 0
        var managers = 0
    }

    private let tally = LockedState(Tally())

    /// How many passes started while another pass of their connection ran.
    var count: Int { tally.withLock { $0.overlaps } }
    /// How many passes started, over every manager.
    var passes: Int { tally.withLock { $0.passes } }

    /// Installs a witness on `manager`'s engine that reports here.
    func watch(_ manager: SyncManager) async {
        let number = tally.withLock {
            $0.managers += 1
            return $0.managers
        }
        await manager.engine.setSyncPassWitness { [self] epoch, starts in
            let connection = Connection(manager: number, epoch: epoch)
            tally.withLock {
                if starts {
                    $0.passes += 1
                    if $0.running[connection, default: 0] > 0 { $0.overlaps += 1 }
                    $0.running[connection, default: 0] += 1
                } else {
                    $0.running[connection, default: 0] -= 1
                }
            }
        }
    }
}
