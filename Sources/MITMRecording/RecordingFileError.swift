/// Why a recording file cannot be written, found when its writer is made (before the proxy starts): the output (by the
/// `mitm-proxy` flag that asks for it), the file, and what failed, in words that say what to change.
public struct RecordingFileError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The recording outputs, named by their flag.
    public enum Output: String, Sendable {
        case events = "--events"
        case har = "--har"
        case report = "--report"
    }

    /// Which output.
    public let output: Output
    /// The file it was to write.
    public let path: String
    /// What failed (`cannot open for writing: Permission denied`).
    public let problem: String

    /// An error for `output` at `path`.
    public init(_ output: Output, path: String, problem: String) {
        self.output = output
        self.path = path
        self.problem = problem
    }

    /// `--har /tmp/run.har: cannot open for writing: Permission denied`.
    public var description: String { "\(output.rawValue) \(path): \(problem)" }

    /// The same as `description`.
    public var message: String { description }
}
