import Foundation

/// A random version-4 UUID string for the raw baseline's outbox rows, drawn as ChatSync
/// draws a `reqId` (from the system generator, with no file opened; `UUID()` on Linux
/// opens `/dev/urandom` each time), so that both sides pay the same for the identifier.
/// The benchmark keeps its own copy: the baseline never calls library code.
enum RawRequestId {
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: generator.next() as UInt64, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: generator.next() as UInt64, toByteOffset: 8, as: UInt64.self)
            raw[6] = (raw[6] & 0x0F) | 0x40
            raw[8] = (raw[8] & 0x3F) | 0x80
        }
        return UUID(uuid: bytes).uuidString
    }
}
