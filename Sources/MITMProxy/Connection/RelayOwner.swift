/// What a relay (HTTP/1, HTTP/2 or raw) tells the connection that owns it, on the connection's loop. Relays hold their
/// owner `unowned` (the owner outlives them, and they drop it when they close): a weak reference would give every
/// connection a side table, and each retain and release of it the slow path.
protocol RelayOwner: AnyObject {
    /// Bytes moved, or the relay's own deadline changed: the owner recomputes its deadline. `headDeadline`: an HTTP/1
    /// relay's deadline for the request head it is reading, if any.
    func relayActivity(headDeadline: UInt64?)
    /// The relay sent its last byte and only waits for the client to hang up.
    func relayLingering()
    /// The relay closed both legs.
    func relayClosed(reason: String)
    /// A `101 Switching Protocols` turned the connection into raw bytes, now relayed by `raw`.
    func relayUpgraded(to raw: RawRelay)
    /// The client left while the intercepted upstream is idle and healthy: the owner may keep it for reuse,
    /// and must close it otherwise.
    func relayReleasedUpstream(_ leg: Leg)
    /// The relay parked its idle upstream (`relayReleasedUpstream`) and has a request for the origin again: `done`
    /// gets a pooled connection opened the same way, at once, or a new one once its TLS handshake completes. The
    /// returned attempt cancels a connection still being made.
    func relayNeedsUpstream(_ done: @escaping (Result<ReadyUpstream, UpstreamFailure>) -> Void) -> (
        any UpstreamAttempt
    )?
}
