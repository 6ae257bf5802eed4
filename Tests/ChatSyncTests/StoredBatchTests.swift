import ChatSyncTesting
import Testing

@testable import ChatSync

/// The batch a sync step stored last serves the read that follows it from memory (issue
/// 17). These schedules check it against the cache itself: a channel with random rows,
/// random batches stored over random spans (copies newer than the batch's among them,
/// messages moved, fields the columns do not keep), then random page reads. Wherever the
/// kept batch answers, it answers what the cache does.
@Suite("Stored batch")
struct StoredBatchTests {
    /// The channel, spelled with a composed "é"; ``otherSpelling`` is the same text to
    /// Swift's `==` (a decomposed "e" and accent) but other bytes to SQLite: another key.
    static let channel = "caf\u{E9}"
    static let otherSpelling = "cafe\u{301}"
    /// Senders, two of them one name in two spellings.
    static let senders = ["bob", "carol", "zo\u{EB}", "zoe\u{308}"]

    @Test func aKeptBatchAnswersWhatTheCacheDoes() throws {
        var answered = 0
        var declined = 0
        for seed in 0..<UInt64(300) {
            var random = SeededGenerator(seed: seed &+ 17_000)
            let store = try ChatStore.open(path: nil, userId: "alice")
            var cached: [Int64: Message] = [:]
            let seeded = (0..<Int.random(in: 0...30, using: &random)).map { _ in Self.message(using: &random) }
            try store.upsertMessages(seeded)
            for message in seeded where (cached[message.messageId]?.updatedAt ?? .min) <= message.updatedAt {
                cached[message.messageId] = message
            }
            for round in 0..<5 {
                let span = Self.span(using: &random)
                var batch: [Int64: Message] = [:]
                for _ in 0..<Int.random(in: 0...12, using: &random) {
                    var message = Self.message(using: &random)
                    // Often a message the cache holds, at its key or moved, older or newer.
                    if random.chance(0.4), let known = cached.values.randomElement(using: &random) {
                        message.messageId = known.messageId
                        if random.chance(0.8) { message.createdAt = known.createdAt }
                    }
                    batch[message.messageId] = message
                }
                // Now and then a message under the other spelling of the channel, with an
                // id of its own: stored under that other key, never read as this channel's.
                if random.chance(0.2) {
                    var stray = Self.message(using: &random)
                    stray.channelURL = Self.otherSpelling
                    stray.messageId = 1_000 + Int64(seed) * 10 + Int64(round)
                    batch[stray.messageId] = stray
                }
                let messages = batch.values.sorted { $0.sortKey < $1.sortKey }
                let keptNewer = messages.contains { (cached[$0.messageId]?.updatedAt ?? .min) > $0.updatedAt }
                let nested = random.chance(0.1)
                var written: SyncBatchWrite?
                if nested {
                    try store.batched {
                        written = try store.applySyncBatch(messages, channelURL: Self.channel, chunks: nil, authoritative: span)
                    }
                } else {
                    written = try store.applySyncBatch(messages, channelURL: Self.channel, chunks: nil, authoritative: span)
                }
                let mark = try #require(written).verbatimAt
                #expect(
                    (mark != nil) == (!keptNewer && !nested),
                    "seed \(seed) round \(round): a batch is kept only when stored as given in a transaction of its own")
                cached = Dictionary(
                    try store.page(channelURL: Self.channel, direction: .newer, from: .min, inclusive: true, limit: 1_000).map {
                        ($0.messageId, $0)
                    }, uniquingKeysWith: { first, _ in first })
                guard let mark else { continue }
                #expect(try store.changeMark() == mark)
                let kept = StoredBatch(channelURL: Self.channel, span: span, messages: messages, mark: mark)
                for read in 0..<40 {
                    let direction: PageDirection = random.chance(0.5) ? .older : .newer
                    let anchor = Self.key(using: &random)
                    let inclusive = random.chance(0.5)
                    let bound = Self.key(using: &random)
                    let limit = Int.random(in: 0...8, using: &random)
                    let filter: MessageFilter =
                        switch Int.random(in: 0..<6, using: &random) {
                        case 0: MessageFilter(senderIds: [Self.senders.randomElement(using: &random)!])
                        case 1: MessageFilter(kinds: [.custom])
                        case 2: MessageFilter(customTypes: ["poll"])
                        default: MessageFilter()
                        }
                    // Now and then a read of the other spelling's channel, which the batch is not.
                    let channelURL = random.chance(0.1) ? Self.otherSpelling : Self.channel
                    let fromCache = try store.page(
                        channelURL: channelURL, direction: direction, from: anchor, inclusive: inclusive, bound: bound, limit: limit,
                        filter: filter)
                    guard kept.holds(channelURL),
                        let fromBatch = kept.page(
                            direction: direction, from: anchor, inclusive: inclusive, bound: bound, limit: limit, filter: filter)
                    else {
                        declined += 1
                        continue
                    }
                    answered += 1
                    #expect(
                        fromBatch == fromCache,
                        "seed \(seed) round \(round) read \(read): \(direction) from \(anchor) (inclusive: \(inclusive)) to \(bound), limit \(limit)"
                    )
                }
                // A later write that changes a row moves the mark: the batch no longer stands for the cache.
                if random.chance(0.2), let target = cached.values.randomElement(using: &random) {
                    try store.deleteMessage(channelURL: Self.channel, messageId: target.messageId)
                    cached[target.messageId] = nil
                    #expect(try store.changeMark() != mark, "seed \(seed): a deletion moves the mark")
                } else if random.chance(0.5) {
                    let other = Self.message(using: &random)
                    try store.upsertMessages([other])
                    let changed = (cached[other.messageId]?.updatedAt ?? .min) <= other.updatedAt
                    if changed { cached[other.messageId] = other }
                    #expect((try store.changeMark() != mark) == changed, "seed \(seed): a write that changes a row moves the mark")
                }
            }
        }
        // The schedules reach both outcomes, often.
        #expect(answered > 5_000 && declined > 5_000, "answered \(answered), declined \(declined)")
    }

    /// A message of channel `c` at a random key, with fields the cache does not keep set now and then.
    static func message(using random: inout SeededGenerator) -> Message {
        let custom = random.chance(0.3)
        var message = makeMessage(
            Int64.random(in: 1...60, using: &random), at: Int64.random(in: 1...30, using: &random), channel: channel,
            sender: senders.randomElement(using: &random)!, kind: custom ? .custom : .text, customType: custom ? "poll" : "")
        message.updatedAt = Int64.random(in: 0...3, using: &random)
        if random.chance(0.2) {
            message.file = FileInfo(name: "f", mimeType: "image/png", size: 3, url: "u", localPath: "/tmp/f")
        }
        if random.chance(0.1) { message.isEditPending = true }
        return message
    }

    /// A key where messages lie, or one of the ends of the key space.
    static func key(using random: inout SeededGenerator) -> MessageKey {
        switch Int.random(in: 0..<20, using: &random) {
        case 0: return .min
        case 1: return .max
        default: return MessageKey(createdAt: Int64.random(in: 0...31, using: &random), messageId: Int64.random(in: 0...61, using: &random))
        }
    }

    static func span(using random: inout SeededGenerator) -> KeyRange {
        let ends = [key(using: &random), key(using: &random)].sorted()
        return KeyRange(
            lower: ends[0], lowerInclusive: random.chance(0.5), upper: ends[1], upperInclusive: random.chance(0.5))
    }
}
