/// The process on this machine that owns a client connection's socket, as the system's socket tables showed it
/// when the connection arrived.
public struct ClientProcess: Sendable, Hashable, Codable {
    /// The process id.
    public var pid: Int32
    /// The executable's path (`/proc/PID/exe`), or its name (`/proc/PID/comm`) when the path cannot be read.
    public var executable: String
    /// The command line, arguments joined by spaces, cut at 300 characters.
    public var commandLine: String
    /// With a client command (`-- COMMAND`): whether the process is the command or one of its descendants; nil otherwise.
    public var inClientCommand: Bool?

    /// Creates a process description.
    public init(pid: Int32, executable: String, commandLine: String, inClientCommand: Bool? = nil) {
        self.pid = pid
        self.executable = executable
        self.commandLine = commandLine
        self.inClientCommand = inClientCommand
    }

    /// The executable's file name: `curl`, `java`.
    public var name: String {
        executable.split(separator: "/").last.map(String.init) ?? executable
    }
}

/// Why a client's process is not known (it is only looked up for clients on this machine).
public enum ProcessUnknownReason: String, Sendable, Codable, Equatable, Error {
    /// The client is on another machine: its processes are invisible from here.
    case remote
    /// Process lookups are off (no client command and no `--identify-processes`).
    case notLookedUp = "not-looked-up"
    /// The socket was gone from the system's tables before the lookup (the client closed it, or exited).
    case gone
    /// The socket belongs to a process whose descriptors this user may not read (another user's process).
    case notPermitted = "not-permitted"
    /// The lookup did not finish in time.
    case timedOut = "timed-out"

    /// Whether a lookup was made and failed: a label says why (a remote client, or lookups off, is the usual case).
    public var isLookupFailure: Bool {
        switch self {
        case .gone, .notPermitted, .timedOut: true
        case .remote, .notLookedUp: false
        }
    }

    /// In words, for the report and the console.
    public var text: String {
        switch self {
        case .remote: "process unknown: the client is on another machine"
        case .notLookedUp: "process not looked up (only with a client command or --identify-processes)"
        case .gone: "process unknown: the connection was gone before it could be looked up"
        case .notPermitted: "process unknown: it belongs to another user (run the proxy as root to see it)"
        case .timedOut: "process unknown: the lookup took too long"
        }
    }
}
