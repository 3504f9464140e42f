/// How the client command of a CI run (`mitm-proxy ... -- COMMAND`) ended.
public struct ClientCommandOutcome: Sendable, Equatable, Codable {
    /// The command line, joined with spaces.
    public var command: String
    /// Its exit status, or nil when a signal ended it.
    public var exitStatus: Int32?
    /// The signal that ended it, if one did.
    public var signal: Int32?
    /// How long it ran (absent in reports of earlier versions).
    public var seconds: Double?

    /// Creates an outcome.
    public init(command: String, exitStatus: Int32?, signal: Int32?, seconds: Double? = nil) {
        self.command = command
        self.exitStatus = exitStatus
        self.signal = signal
        self.seconds = seconds
    }

    /// Whether it exited with status 0.
    public var succeeded: Bool { exitStatus == 0 && signal == nil }

    /// `exited with status 5`, `killed by signal 9`.
    public var status: String {
        if let signal { return "\(command) was killed by signal \(signal)" }
        return "\(command) exited with status \(exitStatus ?? -1)"
    }
}
