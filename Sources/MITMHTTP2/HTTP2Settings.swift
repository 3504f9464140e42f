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

    /// The defaults above.
    public init() {}
}
