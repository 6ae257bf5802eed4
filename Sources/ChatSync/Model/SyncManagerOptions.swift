import Foundation
import Logging

/// Settings of a ``SyncManager``. Values out of range make `SyncManager.init`
/// throw ``SyncManagerError/Code/invalidParameter``.
///
/// ```swift
/// var options = SyncManagerOptions()
/// options.messageResendPolicy = .automatic
/// options.syncBatchSize = 200
/// let manager = try await SyncManager(userId: "alice", service: service,
///                                     databasePath: path, options: options)
/// ```
///
/// | option | default | range |
/// | --- | --- | --- |
/// | ``messageCollectionCapacity`` | 1000 | ≥ 200 |
/// | ``automaticMessageResendRetryCount`` | 10 | 1...50 |
/// | ``maxFailedMessageCountPerChannel`` | 20 | 1...1000 |
/// | ``failedMessageRetentionDays`` | 7 | 1...365 |
/// | ``sendRetryLimit`` | 3 | 0...20 |
/// | ``sendRetryInterval`` | 5 s | 0...10 min |
/// | ``syncBatchSize`` | 100 | 1...1000 |
/// | ``hugeGapThreshold`` | 300 | ≥ 1 |
/// | ``messageStoreCapacity`` | `nil` (unlimited) | `nil` or ≥ ``messageCollectionCapacity`` |
public struct SyncManagerOptions: Sendable {
    /// The most succeeded messages a collection's view holds (its window).
    public var messageCollectionCapacity: Int = 1000
    /// What happens to a message once sending it has failed.
    public var messageResendPolicy: MessageResendPolicy = .manual
    /// How many times the automatic policy resends one failed message.
    public var automaticMessageResendRetryCount: Int = 10
    /// The most failed messages kept per channel; the oldest are removed first. A message
    /// being resent is neither counted nor removed while in flight, so the list may hold
    /// more until resends end.
    public var maxFailedMessageCountPerChannel: Int = 20
    /// Failed messages older than this are removed.
    public var failedMessageRetentionDays: Int = 7
    /// How many times one send is retried after a transient error.
    public var sendRetryLimit: Int = 3
    /// The wait before retrying a send after a transient error.
    public var sendRetryInterval: Duration = .seconds(5)
    /// Messages asked of the service per background-sync request.
    public var syncBatchSize: Int = 100
    /// More missing messages than this between a view and the server's newest
    /// makes a collection report a huge gap instead of syncing them all.
    public var hugeGapThreshold: Int = 300
    /// About how many succeeded messages the cache keeps, all channels together; `nil`
    /// keeps all.
    ///
    /// Enforced at open and while running by a background trim in bounded steps: the
    /// cache may exceed it by a tenth (the slack between trims) and by what open
    /// collections show. Closed channels viewed least lately lose their oldest messages
    /// first; pending and failed messages and the messages of open views are never
    /// evicted, and scrolling back into an evicted range fetches it again. See
    /// Sources/ChatSync/ChatSync.docc/Guarantees.md, "Bounded cache".
    public var messageStoreCapacity: Int?
    /// The clock every wait goes through; tests inject a test clock.
    public var clock: any Clock<Duration> = ContinuousClock()
    /// Wall time in milliseconds since 1970, for the creation time of messages sent
    /// from this device and for failed-message retention; tests inject a fixed one.
    public var currentTime: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    /// Where ChatSync logs.
    public var logger: Logger = Logger(label: "ChatSync")

    /// Creates options with the defaults.
    public init() {}

    /// Throws ``SyncManagerError/Code/invalidParameter`` naming the first option out of range.
    public func validate() throws {
        func check(_ holds: Bool, _ what: String) throws {
            if !holds { throw SyncManagerError(.invalidParameter, "SyncManagerOptions.\(what)") }
        }
        try check(
            messageCollectionCapacity >= 200,
            "messageCollectionCapacity must be at least 200 (got \(messageCollectionCapacity))")
        try check(
            (1...50).contains(automaticMessageResendRetryCount),
            "automaticMessageResendRetryCount must be in 1...50 (got \(automaticMessageResendRetryCount))")
        try check(
            (1...1000).contains(maxFailedMessageCountPerChannel),
            "maxFailedMessageCountPerChannel must be in 1...1000 (got \(maxFailedMessageCountPerChannel))")
        try check(
            (1...365).contains(failedMessageRetentionDays),
            "failedMessageRetentionDays must be in 1...365 (got \(failedMessageRetentionDays))")
        try check((0...20).contains(sendRetryLimit), "sendRetryLimit must be in 0...20 (got \(sendRetryLimit))")
        try check(
            sendRetryInterval >= .zero && sendRetryInterval <= .seconds(600),
            "sendRetryInterval must be between 0 and 10 minutes (got \(sendRetryInterval))")
        try check((1...1000).contains(syncBatchSize), "syncBatchSize must be in 1...1000 (got \(syncBatchSize))")
        try check(hugeGapThreshold >= 1, "hugeGapThreshold must be at least 1 (got \(hugeGapThreshold))")
        if let messageStoreCapacity {
            try check(
                messageStoreCapacity >= messageCollectionCapacity,
                "messageStoreCapacity must be nil or at least messageCollectionCapacity (got \(messageStoreCapacity))")
        }
    }
}
