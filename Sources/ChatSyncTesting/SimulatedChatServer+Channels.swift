import ChatSync

// MARK: - Channels

extension SimulatedChatServer {
    /// Creates a channel with its members.
    public func createChannel(_ channelURL: String, members: [String], name: String = "", customType: String = "") throws {
        guard !channelURL.isEmpty else { throw ChatServiceError.permanent(.invalid, "channelURL is empty") }
        guard channelStates[channelURL] == nil else {
            throw ChatServiceError.permanent(.invalid, "channel \(channelURL) exists")
        }
        let channel = Channel(channelURL: channelURL, name: name, customType: customType, memberIds: members, createdAt: tick())
        channelStates[channelURL] = ChannelState(channel: channel)
        recordChannelChange(channelURL, users: channel.memberKeys)
        broadcast(.channelChanged(channel), to: members)
    }

    /// Renames a channel.
    @discardableResult
    public func updateChannel(_ channelURL: String, name: String) throws -> Channel {
        try mutateChannel(channelURL) { $0.name = name }
    }

    /// Freezes or unfreezes a channel; sends to a frozen channel fail permanently.
    public func setFrozen(_ frozen: Bool, channelURL: String) throws {
        try mutateChannel(channelURL) { $0.isFrozen = frozen }
    }

    /// Deletes a channel and its messages.
    public func deleteChannel(_ channelURL: String) throws {
        let state = try channelState(channelURL)
        channelStates[channelURL] = nil
        recordChannelChange(channelURL, users: state.channel.memberKeys)
        broadcast(.channelRemoved(channelURL: channelURL), to: state.channel.memberIds)
    }

    /// Adds a member to a channel.
    public func addMember(_ userId: String, to channelURL: String) throws {
        try mutateChannel(channelURL) { channel in
            if !channel.hasMember(userId) { channel.memberIds.append(userId) }
        }
    }

    /// Removes a member (as if they left); they get `.channelRemoved`, the others an update.
    public func removeMember(_ userId: String, from channelURL: String) throws {
        try mutateChannel(channelURL, alsoNotify: [userId]) { channel in
            channel.memberIds.removeAll { UserKey($0) == UserKey(userId) }
        }
        broadcast(.channelRemoved(channelURL: channelURL), to: [userId])
    }

    /// The channel as the server holds it.
    public func channel(_ channelURL: String) -> Channel? {
        channelStates[channelURL]?.channel
    }

    @discardableResult
    private func mutateChannel(_ channelURL: String, alsoNotify: [String] = [], _ change: (inout Channel) -> Void) throws -> Channel {
        var state = try takeChannelState(channelURL)
        let before = state.channel.memberKeys
        change(&state.channel)
        state.channel.updatedAt = tick()
        channelStates[channelURL] = state
        recordChannelChange(channelURL, users: before.union(state.channel.memberKeys).union(alsoNotify.map(UserKey.init)))
        broadcast(.channelChanged(state.channel), to: state.channel.memberIds)
        return state.channel
    }

    /// Takes a channel's state out of the dictionary so that changing it does not copy its
    /// message array (a copy per post would make large histories quadratic); put it back
    /// with `channelStates[url] = state`.
    func takeChannelState(_ channelURL: String) throws -> ChannelState {
        guard let state = channelStates.removeValue(forKey: channelURL) else {
            throw ChatServiceError.permanent(.notFound, "no channel \(channelURL)")
        }
        return state
    }

    func channelState(_ channelURL: String) throws -> ChannelState {
        guard let state = channelStates[channelURL] else {
            throw ChatServiceError.permanent(.notFound, "no channel \(channelURL)")
        }
        return state
    }

    func recordChannelChange(_ channelURL: String, users: Set<UserKey>) {
        changeSeq += 1
        channelChanges.append((changeSeq, channelURL, users))
    }
}
