/// Which end of the connection a session is.
public enum HTTP2Role: Sendable {
    /// Accepts streams (the proxy toward its client).
    case server
    /// Opens streams (the proxy toward the upstream).
    case client
}

/// What a session advertises and enforces.
public struct HTTP2Settings: Sendable, Equatable {
    /// SETTINGS_MAX_CONCURRENT_STREAMS: streams the peer may open at once.
    public var maxConcurrentStreams: UInt32 = 100
    /// SETTINGS_INITIAL_WINDOW_SIZE: body bytes the peer may send on a stream before this side consumes them.
    /// This bounds what the proxy holds per stream.
    public var streamWindow: Int32 = 256 * 1024
    /// The connection-level receive window (raised from 64 KiB with a WINDOW_UPDATE on start).
    public var connectionWindow: Int32 = 1024 * 1024
    /// SETTINGS_MAX_HEADER_LIST_SIZE: larger header blocks are reported with `exceedsLimit`.
    public var maxHeaderListSize: UInt32 = 64 * 1024
    /// SETTINGS_ENABLE_PUSH for a client session (the proxy refuses server push).
    public var enablePush = false
    /// How many streams to open before the peer's SETTINGS arrive (nghttp2 assumes 100). 0 holds every
    /// new stream back until the peer has said its limit, so a burst never exceeds it.
    public var streamsBeforePeerSettings: UInt32 = 100

    // Flood limits: a peer past one of them gets GOAWAY ENHANCE_YOUR_CALM (the rapid-reset limit:
    // INTERNAL_ERROR, nghttp2's choice) and the session ends.

    /// CONTINUATION frames accepted after one HEADERS frame (CVE-2024-28182): nine frames of 16 KiB already
    /// hold twice `maxHeaderListSize`, so more can only be a header block that never ends.
    public var maxContinuations = 8
    /// Entries accepted in one SETTINGS frame (there are seven settings).
    public var maxSettingsEntries = 32
    /// SETTINGS and PING acknowledgements waiting to be sent: a peer that floods them without reading the answers
    /// (CVE-2019-9512, CVE-2019-9515) reaches this before the queue costs memory.
    public var maxQueuedAcknowledgements = 1000
    /// RST_STREAM frames from the peer (server role, CVE-2023-44487): a burst of this many, ...
    public var resetBurst: UInt64 = 1000
    /// ... then this many a second.
    public var resetsPerSecond: UInt64 = 33

    /// The defaults above.
    public init() {}
}
