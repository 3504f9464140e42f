/// A problem with the input of `mitm-proxy pins`: a file, a host or a configuration that cannot be used.
///
/// The message names the file or host and says what to do; the command exits with status 2.
public struct PinsError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The whole message, e.g. `cannot read certificate file /tmp/a.pem: no such file`.
    public let message: String

    /// An error with `message`.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
