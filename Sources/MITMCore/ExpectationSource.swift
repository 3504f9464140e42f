/// Where an expectation comes from: an `--expect` flag, or a pinned domain of the app's own configuration
/// (`--expect-from Info.plist`), with what that configuration says about it.
public struct ExpectationSource: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The configuration file, or nil for an `--expect` flag.
    public var file: String?
    /// The domain entry of `file` it was derived from.
    public var domain: String?
    /// Why the outcome is what it is, when the file says something surprising (an expired pin-set).
    public var note: String?

    /// An `--expect` flag.
    public static let flag = ExpectationSource()

    /// A flag (no file) or a domain of `file`.
    public init(file: String? = nil, domain: String? = nil, note: String? = nil) {
        self.file = file
        self.domain = domain
        self.note = note
    }

    /// Whether it is an `--expect` flag.
    public var isFlag: Bool { file == nil }

    /// `--expect`, or `Info.plist (domain api.example.com)`.
    public var description: String {
        guard let file else { return "--expect" }
        return domain.map { "\(file) (domain \($0))" } ?? file
    }
}
