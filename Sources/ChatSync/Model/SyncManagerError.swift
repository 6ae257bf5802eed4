/// The error every ChatSync call throws, with a stable numeric ``Code``.
///
/// ```swift
/// do {
///     _ = try await collection.fetchSucceededMessages(.previous)
/// } catch let error as SyncManagerError where error.code == .duplicatedFetch {
///     // a fetch in that direction is already running
/// }
/// ```
public struct SyncManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public var code: Code
    /// A human-readable explanation.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Stable error codes.
    public enum Code: Int, Sendable, Hashable, CaseIterable {
        /// Reading or writing the cache failed.
        case databaseIO = 810001
        /// The manager or collection is not ready for the call.
        case notSetUp = 810100
        /// A fetch in the same direction is already running.
        case duplicatedFetch = 810200
        /// An argument or option is out of its range.
        case invalidParameter = 810300
        /// A time range is empty or reversed.
        case invalidTimeRange = 810305
        /// The manager or collection has been closed or removed.
        case closed = 810400
        /// The database belongs to another user.
        case userMismatch = 810500
        /// The database file is damaged or is not a database.
        case corruptDatabase = 810600
    }

    /// `SyncManagerError(code): message`.
    public var description: String { "SyncManagerError(\(code)): \(message)" }
}
