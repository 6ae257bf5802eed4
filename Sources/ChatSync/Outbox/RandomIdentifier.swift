import Foundation

/// Identifiers for new outbox rows (a message's `reqId`, an operation's id).
enum RandomIdentifier {
    /// A random (version 4) UUID string from the system's generator. `UUID()` on Linux
    /// opens, reads and closes `/dev/urandom` for every value: three system calls, a
    /// twentieth of a send. This draws the same 122 random bits with no file.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = generator.next()
        let low: UInt64 = generator.next()
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
        }
        return UUID(uuid: bytes).uuidString
    }
}
