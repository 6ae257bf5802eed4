/// One real-time copy of a message the simulator loses on its way: the next one `sender`
/// posts in `channelURL`, meant for `user`.
struct EchoToLose: Hashable, Sendable {
    let user: UserKey
    let sender: UserKey
    let channelURL: String
}
