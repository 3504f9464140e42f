/// A problem with the CA directory, phrased for the person who has to fix it.
public struct CertificateAuthorityError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, naming the file, and what to do.
    public let message: String

    /// Creates an error with a complete, user-facing message.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
