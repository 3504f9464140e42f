/// A CI expectation: `refused:HOST` or `intercepted:HOST` (HOST may be a pattern like `*.example.com`); in an audit
/// also `validates:HOST` and `pinned:HOST`.
public struct Expectation: Sendable, Equatable, CustomStringConvertible {
    /// What the matching hosts must show.
    public enum Outcome: String, Sendable, Codable {
        /// The client must have accepted the forged certificate (a control host).
        case intercepted
        /// The client must have refused it (a pinned host).
        case refused
        /// `mitm-proxy audit`: the client must refuse every invalid certificate.
        case validates
        /// `mitm-proxy audit`: the client must refuse every invalid certificate and the trusted one, and work without the proxy.
        case pinned

        /// Whether only an audit's conclusion can decide it.
        public var isAuditConclusion: Bool { self == .validates || self == .pinned }
    }

    /// The required outcome.
    public let outcome: Outcome
    /// Which hosts it applies to.
    public let pattern: HostPattern
    /// A flag, or the configuration file and domain it was read from.
    public let source: ExpectationSource

    /// `outcome` for `pattern`, from `source`.
    public init(_ outcome: Outcome, _ pattern: HostPattern, source: ExpectationSource = .flag) {
        self.outcome = outcome
        self.pattern = pattern
        self.source = source
    }

    /// The expectation a report recorded (its text, with the one-level pattern form, and its source).
    public init(recorded result: ExpectationResult) throws(ExpectationError) {
        let text = result.expectation
        guard let colon = text.firstIndex(of: ":"), let outcome = Outcome(rawValue: String(text[..<colon])) else {
            throw ExpectationError(text, "expected OUTCOME:HOST, e.g. refused:api.example.com")
        }
        do {
            pattern = try HostPattern(recorded: String(text[text.index(after: colon)...]))
        } catch {
            throw ExpectationError(text, error.description)
        }
        self.outcome = outcome
        source = result.source ?? .flag
    }

    /// Parses `refused:HOST` / `intercepted:HOST`.
    public init(parsing text: String) throws(ExpectationError) {
        guard let colon = text.firstIndex(of: ":") else {
            throw ExpectationError(text, "expected OUTCOME:HOST, e.g. refused:api.example.com")
        }
        guard let outcome = Outcome(rawValue: String(text[..<colon]).lowercased()) else {
            throw ExpectationError(
                text,
                "the outcome must be `refused` or `intercepted` (or, in `mitm-proxy audit`, `validates` or `pinned`)")
        }
        do {
            pattern = try HostPattern(String(text[text.index(after: colon)...]))
        } catch {
            throw ExpectationError(text, error.description)
        }
        self.outcome = outcome
        source = .flag
    }

    public var description: String { "\(outcome.rawValue):\(pattern)" }
}

/// A malformed `--expect` value.
public struct ExpectationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The expectation as written.
    public let text: String
    /// What is wrong with it and how to write it instead.
    public let problem: String
    init(_ text: String, _ problem: String) {
        self.text = text
        self.problem = problem
    }

    /// The whole message: `--expect TEXT: PROBLEM`.
    public var description: String { "--expect \(text): \(problem)" }
}

/// The outcome of one expectation.
public struct ExpectationResult: Sendable, Equatable, Codable {
    /// The expectation as written (`refused:pinned.example.com`).
    public var expectation: String
    /// Whether it holds.
    public var met: Bool
    /// Matching hosts and their verdicts.
    public var hosts: [String: String]
    /// Why it holds or not.
    public var explanation: String
    /// Where it came from (absent in reports of earlier versions: a flag).
    public var source: ExpectationSource?

    /// Creates a result.
    public init(
        expectation: String, met: Bool, hosts: [String: String], explanation: String, source: ExpectationSource? = nil
    ) {
        self.expectation = expectation
        self.met = met
        self.hosts = hosts
        self.explanation = explanation
        self.source = source
    }
}
