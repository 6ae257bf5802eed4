extension Array where Element == Message {
    /// Puts `message` in a list ascending by `createdAt` (API §3: pending and failed
    /// lists), after the messages created in the same millisecond: those keep the order
    /// they joined in, so every replay of the same events builds the same list. Messages
    /// usually come newest last, which appends without a search.
    mutating func insertInCreationOrder(_ message: Message) {
        if last.map({ $0.createdAt <= message.createdAt }) ?? true { return append(message) }
        insert(message, at: partitionPoint { $0.createdAt <= message.createdAt })
    }
}
