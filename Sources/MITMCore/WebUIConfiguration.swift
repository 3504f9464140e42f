/// The web UI: the board and the traffic in a browser, served at the proxy's own address (`http://127.0.0.1:PORT/`)
/// and optionally on a listener of its own.
public struct WebUIConfiguration: Sendable {
    /// Whether the proxy serves the web UI and keeps recent flows for it.
    public var enabled = true
    /// A separate port for the web UI (0 picks a free one); nil: only the proxy's own port serves it.
    public var port: Int?
    /// The address of that separate listener.
    public var host = "127.0.0.1"
    /// Lets clients other than this machine in when they present it (`?token=`, then a cookie); nil: loopback only.
    public var token: String?
    /// Flows kept for the page (the oldest go first).
    public var flowLimit = 10_000
    /// Body bytes kept across those flows (the oldest flows' bodies go first; their sizes stay).
    public var bodyBudget = 64 * 1024 * 1024
    /// Bytes of flow messages held for one browser that reads slowly; past it, they are dropped and the page reloads its list.
    public var feedCapacity = 512 * 1024
    /// The run's expectations, shown on the board.
    public var expectations: [Expectation] = []
    /// Whether the HAR downloaded from the page masks credentials (`--redact`).
    public var redactHAR = false

    /// The defaults: on, this machine only.
    public init() {}
}
