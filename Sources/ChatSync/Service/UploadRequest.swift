/// A file to upload before its media message is sent.
public struct UploadRequest: Sendable, Hashable, Codable {
    /// The request id of the message the file belongs to.
    public var reqId: String
    /// The channel the message goes to.
    public var channelURL: String
    /// The source file on this device.
    public var localPath: String
    /// The file name shown to users.
    public var name: String
    /// The MIME type.
    public var mimeType: String
    /// The size in bytes.
    public var size: Int64

    /// Creates an upload request.
    public init(reqId: String, channelURL: String, localPath: String, name: String, mimeType: String, size: Int64) {
        self.reqId = reqId
        self.channelURL = channelURL
        self.localPath = localPath
        self.name = name
        self.mimeType = mimeType
        self.size = size
    }
}
