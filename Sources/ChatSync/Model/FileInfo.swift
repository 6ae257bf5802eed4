/// The attachment of a media message.
///
/// While unsent, ``localPath`` names the source file; the server sets ``url``
/// when the upload completes.
///
/// ```swift
/// let photo = FileInfo(name: "cat.jpg", mimeType: "image/jpeg", size: 48_213,
///                      localPath: "/tmp/cat.jpg")
/// ```
public struct FileInfo: Sendable, Hashable, Codable {
    /// The file's name as shown to users.
    public var name: String
    /// The MIME type, such as `image/jpeg`.
    public var mimeType: String
    /// The size in bytes.
    public var size: Int64
    /// Where the server stores the file; set after upload.
    public var url: String?
    /// The source file on this device while the message is unsent.
    public var localPath: String?

    /// Creates file information.
    public init(name: String, mimeType: String, size: Int64, url: String? = nil, localPath: String? = nil) {
        self.name = name
        self.mimeType = mimeType
        self.size = size
        self.url = url
        self.localPath = localPath
    }
}
