import ChatSyncTesting
import Testing

@testable import ChatSync

/// The ring a view keeps its messages in, against a plain array doing the same: random
/// prepends, appends, removals from either end and by predicate, replacements and clears,
/// across the ring's growth and its wrapping around.
@Suite("Message window")
struct MessageWindowTests {
    @Test func aWindowHoldsWhatAnArrayWouldThroughRandomChanges() {
        var next: Int64 = 0
        func messages(_ count: Int) -> [Message] {
            (0..<count).map { _ in
                next += 1
                return makeMessage(next, at: next, text: "m\(next)")
            }
        }
        for seed in 0..<UInt64(200) {
            var random = SeededGenerator(seed: seed &+ 19_000)
            var window = MessageWindow()
            var array: [Message] = []
            for step in 0..<60 {
                switch Int.random(in: 0..<8, using: &random) {
                case 0, 1:
                    let added = messages(Int.random(in: 0...40, using: &random))
                    window.prepend(contentsOf: added)
                    array.insert(contentsOf: added, at: 0)
                case 2, 3:
                    let added = messages(Int.random(in: 0...40, using: &random))
                    window.append(contentsOf: added)
                    array.append(contentsOf: added)
                case 4:
                    let k = Int.random(in: 0...array.count, using: &random)
                    let removed = window.removeFirst(k)
                    #expect(removed == Array(array.prefix(k)), "seed \(seed) step \(step): removeFirst answers what it removed")
                    array.removeFirst(k)
                case 5:
                    let k = Int.random(in: 0...array.count, using: &random)
                    let removed = window.removeLast(k)
                    #expect(removed == Array(array.suffix(k)), "seed \(seed) step \(step): removeLast answers what it removed")
                    array.removeLast(k)
                case 6:
                    if !array.isEmpty {
                        let position = Int.random(in: 0..<array.count, using: &random)
                        var changed = array[position]
                        changed.text = "edited at \(step)"
                        window[position] = changed
                        array[position] = changed
                    }
                default:
                    if random.chance(0.2) {
                        window.removeAll()
                        array.removeAll()
                    } else {
                        let modulus = Int64.random(in: 2...5, using: &random)
                        window.removeAll { $0.messageId % modulus == 0 }
                        array.removeAll { $0.messageId % modulus == 0 }
                    }
                }
                #expect(Array(window) == array, "seed \(seed) step \(step): the window holds what the array does")
                #expect(window.count == array.count && window.first == array.first && window.last == array.last)
            }
        }
    }
}
