/// A rule, flag or rules file that cannot be used, with a reason that names what and says how to write it.
public struct RuleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The whole explanation.
    public let message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
