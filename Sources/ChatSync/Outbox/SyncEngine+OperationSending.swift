// MARK: - Sending an edit or deletion, and what its answer changes

extension SyncEngine {
    /// One try at an operation at the head of its lane. Answers `false` when the lane
    /// must stop (closed). Errors are classified as for a send: waiting for the
    /// connection spends nothing; transient errors spend a retry; permanent ones and
    /// spent retries fail the operation and undo its local effect.
    func attempt(_ queued: QueuedOperation) async -> Bool {
        let operation = queued.operation
        let epochAtStart = epoch
        do {
            switch operation.kind {
            case .edit:
                let answer = try await service.updateMessage(
                    channelURL: operation.channelURL, messageId: operation.messageId, text: operation.text ?? "",
                    operationId: operation.id)
                guard !isClosed else { return false }
                guard answer.messageId == operation.messageId, answer.channelURL == operation.channelURL else {
                    throw ChatServiceError.transient(.badResponse, "the answer to editing \(operation.messageId) describes another message")
                }
                try landEdit(queued, answer: answer.asSynced)
            case .deletion:
                try await service.deleteMessage(
                    channelURL: operation.channelURL, messageId: operation.messageId, operationId: operation.id)
                guard !isClosed else { return false }
                try landDeletion(queued)
            }
        } catch let error as SyncManagerError {
            if !isClosed { logger.error("the outbox could not record operation \(operation.id): \(error)") }
            return false
        } catch {
            guard !isClosed else { return false }
            await handleOperationError(queued, ChatServiceError.classify(error), epochAtStart: epochAtStart)
        }
        return true
    }

    private func handleOperationError(_ queued: QueuedOperation, _ error: ChatServiceError, epochAtStart: Int) async {
        do {
            guard pendingWrites.contains(id: queued.id) else { return }
            // Deleting a message that is already gone is done, whoever deleted it.
            if queued.operation.kind == .deletion, error.code == .notFound, !error.isTransient { return try landDeletion(queued) }
            guard error.isTransient else { return try failForGood(queued, failure: error.failure) }
            let unreachable = error.code == .network || !isOnline || epoch != epochAtStart
            let attempts = queued.attempts + (unreachable ? 0 : 1)
            guard attempts <= options.sendRetryLimit else { return try failForGood(queued, failure: error.failure) }
            try store.setOperationAttempts(id: queued.id, attempts: attempts)
            pendingWrites.setAttempts(id: queued.id, attempts)
            logger.debug("operation \(queued.id) failed (\(error)); retrying after \(options.sendRetryInterval)")
            if isOnline { try await options.clock.sleep(for: options.sendRetryInterval) }
        } catch {
            logger.debug("retry wait of operation \(queued.id) ended: \(error)")
        }
    }

    /// The service took the edit: its answer becomes the confirmed version, shown with
    /// any edits still queued on top.
    private func landEdit(_ queued: QueuedOperation, answer: Message) throws {
        // Superseded meanwhile (a deletion was queued): the service still applied it, so
        // the cache takes the answer in case that deletion fails and the message returns.
        _ = forget(queued)
        refreshSyncedLately(answer)  // also when the cache does not hold it
        // A page in flight may carry the copy before it, and the store keeps a newer copy
        // only of a message it holds (one awaiting its echo it does not).
        rememberEditForAnswersInFlight(answer)
        let confirmed = try store.landEdit(operationId: queued.id, answer: answer)
        if let awaited = awaitedEcho(channelURL: answer.channelURL, messageId: answer.messageId) {
            // Still waiting for its echo, it is shown from the answer kept for it: that
            // copy becomes the confirmed version, or a later refused edit would undo to
            // the text before this one.
            var copy = answer
            copy.reqId = awaited.reqId
            outbox.replaceAwaitedAnswer(copy)
            showAwaitedEcho(pendingWrites.overlaid(copy) ?? copy)
        }
        try resolveOwnUpdates([confirmed], in: answer.channelURL)
        refreshViews(answer.channelURL, with: [confirmed], admitting: false)
        noteChangedMessage(channelURL: answer.channelURL, messageId: answer.messageId, now: confirmed)
    }

    /// The service deleted the message: a confirmed deletion, like one from anyone else.
    private func landDeletion(_ queued: QueuedOperation) throws {
        guard forget(queued) else { return }
        ownDeletionLanded(channelURL: queued.channelURL, messageId: queued.messageId)
        try store.landDeletion(operationId: queued.id, channelURL: queued.channelURL, messageId: queued.messageId)
        applyDeleted(channelURL: queued.channelURL, messageIds: [queued.messageId])
    }

    /// The operation failed for good: it leaves the outbox, its channel's collections are
    /// told, and the message is shown as the service last confirmed it (with the other
    /// queued edits on top). An edit refused because the message is gone removes it.
    private func failForGood(_ queued: QueuedOperation, failure: SyncFailure) throws {
        guard forget(queued) else { return }
        try store.deleteOperations(ids: [queued.id])
        logger.info("operation \(queued.id) (\(queued.operation.kind.rawValue) of \(queued.messageId)) failed: \(failure.message)")
        operationFailureWitness?(queued.operation)
        // The report follows the undo, so an app reading its lists on the event sees them undone.
        defer { for view in views(of: queued.channelURL) { view.emit(.operationFailed(queued.operation, failure)) } }
        if queued.operation.kind == .edit, failure.code == ChatServiceError.Code.notFound.rawValue {
            return applyDeleted(channelURL: queued.channelURL, messageIds: [queued.messageId])
        }
        if let confirmed = try store.message(channelURL: queued.channelURL, messageId: queued.messageId) {
            refreshViews(queued.channelURL, with: [confirmed], admitting: queued.operation.kind == .deletion)
            // The channel's preview is undone too: a deletion gives the message back its
            // place as the last one if it is still the newest.
            if queued.operation.kind == .deletion {
                noteNewMessage(confirmed)
            } else {
                noteChangedMessage(channelURL: queued.channelURL, messageId: queued.messageId, now: confirmed)
            }
        } else if let awaited = awaitedEcho(channelURL: queued.channelURL, messageId: queued.messageId),
            let shown = pendingWrites.overlaid(awaited)
        {
            // Answered and waiting for its echo, it lives in the pending (or failed) lists,
            // not the cache: the undo happens there, as the edit was shown there. Its answer
            // may be the channel's preview.
            guard queued.operation.kind == .deletion else {
                noteChangedMessage(channelURL: queued.channelURL, messageId: queued.messageId, now: awaited)
                return showAwaitedEcho(shown)
            }
            noteNewMessage(awaited)
            // A refused deletion brings it back, to the list it belongs in: the failed one
            // for an answer to a resend, which stays there until its echo (API §4.3).
            let copy = pendingCopy(of: shown)
            for view in views(of: queued.channelURL) where view.filter.matches(shown) { list(awaited: copy, in: view) }
        } else {
            // No confirmed version is left to bring back: the channel's history left the
            // cache with the channel (deleted or left; a refused token's drop empties the
            // views too), or a clear emptied it. A view still showing the edit leaves the
            // message rather than keep the refused text (adversarial tester F1); a refused
            // deletion has nothing to show. A channel still cached (after a clear) may show
            // the write in its preview: the service is asked for it.
            if queued.operation.kind == .edit {
                for view in views(of: queued.channelURL) { view.remove(messageIds: [queued.messageId]) }
            }
            askForThePreviewOfChannelStillCached(queued.channelURL)
        }
    }

    /// Drops the operation from the in-memory queue; answers `false` when something
    /// else (a deletion that superseded it, or one confirmed meanwhile) already did.
    private func forget(_ queued: QueuedOperation) -> Bool { pendingWrites.remove(id: queued.id) != nil }

    /// A deletion is confirmed (from the service, by anyone): a queued deletion of the
    /// message is done, and its queued edits fail as an edit of a missing message does.
    func settleOperations(ofDeleted messageIds: [Int64], in channelURL: String) {
        guard !pendingWrites.isEmpty else { return }
        for messageId in messageIds {
            let queued = pendingWrites.operations(channelURL: channelURL, messageId: messageId)
            guard !queued.isEmpty else { continue }
            if queued.contains(where: { $0.operation.kind == .deletion }) {
                ownDeletionLanded(channelURL: channelURL, messageId: messageId)
            }
            for operation in queued { pendingWrites.remove(id: operation.id) }
            do { try store.deleteOperations(ids: queued.map(\.id)) } catch {
                logger.error("could not remove the operations of deleted message \(messageId): \(error)")
            }
            let failure = SyncFailure(
                code: ChatServiceError.Code.notFound.rawValue, message: "message \(messageId) was deleted", isRetryable: false)
            // The message leaves the views before the failures are reported (the caller
            // removes it from the cache too; removing twice changes nothing).
            for view in views(of: channelURL) { view.remove(messageIds: [messageId]) }
            for operation in queued where operation.operation.kind == .edit {
                operationFailureWitness?(operation.operation)
                for view in views(of: channelURL) { view.emit(.operationFailed(operation.operation, failure)) }
            }
        }
    }
}
