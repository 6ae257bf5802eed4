/// Why a failed-list event happened.
public enum FailedMessageEventActionReason: String, Sendable, Hashable {
    /// No particular reason: a message failed, or its state changed.
    case none
    /// A resend the app asked for failed (under ``MessageResendPolicy/manual``, also one
    /// that a relaunch found in flight), or the automatic resends were used up.
    case updateResendFailed
    /// A resend succeeded; the message moves to the succeeded list.
    case removeResendSucceeded
    /// It was older than the retention period.
    case removeRetentionExpired
    /// The channel held more failed messages than allowed; the oldest went.
    case removeExceededMaxCount
    /// The app deleted it.
    case removeManualAction
    /// It went for a reason ChatSync could not tell.
    case removeUnknown
}
