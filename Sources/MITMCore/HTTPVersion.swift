/// An HTTP protocol version as written in start lines (`HTTP/1.1`).
public struct HTTPVersion: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// The version `major.minor`.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0.
    public static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1.
    public static let http1_1 = HTTPVersion(major: 1, minor: 1)
    /// HTTP/2 (the version HAR and the logs give streams relayed over h2).
    public static let http2 = HTTPVersion(major: 2, minor: 0)

    /// The version as written on the wire: `HTTP/1.1`.
    public var description: String {
        switch (major, minor) {
        case (1, 1): "HTTP/1.1"
        case (1, 0): "HTTP/1.0"
        case (2, 0): "HTTP/2.0"
        default: "HTTP/\(major).\(minor)"
        }
    }
}
