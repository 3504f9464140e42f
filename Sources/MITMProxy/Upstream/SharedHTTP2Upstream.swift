import Foundation
import MITMCore
import MITMHTTP2
import MITMIO
import MITMTLS

/// One HTTP/2 connection to an origin, shared by the HTTP/2 relays of one loop whose clients go to the same
/// origin the same way (`UpstreamPoolKey`): each relay opens its streams on it, and the connection hands every
/// stream's events back to the relay that opened it. It stays in the loop's pool while it takes new streams
/// (`SharedUpstreamLife`), idles there when no client uses it, and closes on its upstream's GOAWAY once its
/// streams ended, on an error, or after the pool's idle time. Confined to its loop.
// @unchecked Sendable: touched only on its loop's queue; its idle timer fires there.
final class SharedHTTP2Upstream: @unchecked Sendable {
    let key: UpstreamPoolKey
    let leg: Leg
    let session: HTTP2Session
    /// The upstream's leaf, whose names the forged certificate copies.
    let certificate: X509Certificate?
    /// The upstream's IP address.
    let address: String
    private(set) var life = SharedUpstreamLife()
    private weak var pool: UpstreamPool?
    private let loop: EventLoop
    private let clock: ProxyClock
    private var users: [ObjectIdentifier: WeakRelay] = [:]
    /// The relay of each open stream, by stream ID.
    private var owners = HTTP2StreamTable<ObjectIdentifier>()
    private var idleTimer: (any ClockTimer)?
    private var pumpGate = PumpGate()
    private var stopping = false
    /// nghttp2's latest explanation of what the upstream did wrong, for the relay that logs it.
    private var lastDiagnostic: String?

    private struct WeakRelay {
        weak var relay: HTTP2Relay?
    }

    /// Takes over `leg`, on which TLS negotiated h2, and starts its session (the preface and SETTINGS).
    init(
        key: UpstreamPoolKey, leg: Leg, certificate: X509Certificate?, address: String, loop: EventLoop,
        clock: ProxyClock
    ) throws(HTTP2SessionError) {
        self.key = key
        self.leg = leg
        self.certificate = certificate
        self.address = address
        self.loop = loop
        self.clock = clock
        var settings = HTTP2Relay.settings
        settings.streamsBeforePeerSettings = 0
        session = try HTTP2Session(role: .client, settings: settings)
        leg.onEvent = { [unowned self] event in self.legEvent(event) }
        leg.resumeReading()
    }

    /// Whether another client connection may use it now.
    var takesMore: Bool { life.canTakeMore(peerMaxConcurrentStreams: session.peerMaxConcurrentStreams) }

    /// Whether the upstream's first SETTINGS arrived (what it allows, extended CONNECT included, is known).
    private(set) var peerSettingsReceived = false

    /// Whether new streams may still be opened on it (for the relays already using it).
    var isAvailable: Bool { life.state == .open }

    /// Joins the pool, so that later client connections of the loop can use it (once; never after it stopped
    /// taking streams).
    func join(_ pool: UpstreamPool) {
        guard self.pool == nil, life.state == .open, pool.add(self) else { return }
        self.pool = pool
    }

    // MARK: users and streams

    func attach(_ relay: HTTP2Relay) {
        users[ObjectIdentifier(relay)] = WeakRelay(relay: relay)
        perform(life.receive(.attached))
        sizeConnectionWindow()
    }

    /// One connection window's worth of held body per client connection using it (up to 16): what an unshared
    /// connection would allow each of them.
    private func sizeConnectionWindow() {
        let clients = Int32(min(16, max(1, users.count)))
        session.setConnectionWindow(HTTP2Relay.settings.connectionWindow * clients)
    }

    /// The relay is done: its streams were reset by it (or finished); the connection stays for others.
    func detach(_ relay: HTTP2Relay) {
        let id = ObjectIdentifier(relay)
        guard users.removeValue(forKey: id) != nil else { return }
        for (stream, owner) in owners where owner == id { owners[stream] = nil }
        sizeConnectionWindow()
        pump()
        perform(life.receive(.detached))
    }

    /// Opens a stream for `relay`; returns its ID.
    func submitRequest(_ fields: [HTTP2HeaderField], endStream: Bool, for relay: HTTP2Relay) throws(HTTP2SessionError)
        -> Int32
    {
        let streamID = try session.submitRequest(fields, endStream: endStream)
        owners[streamID] = ObjectIdentifier(relay)
        perform(life.receive(.streamOpened))
        return streamID
    }

    /// What nghttp2 last said about an upstream error, once.
    func takeDiagnostic() -> String? {
        defer { lastDiagnostic = nil }
        return lastDiagnostic
    }

    // MARK: moving frames

    private func legEvent(_ event: LegEvent) {
        switch event {
        case .data(let bytes):
            do {
                try session.receive(bytes)
            } catch {
                let code: HTTP2ErrorCode = error.isFlood ? .enhanceYourCalm : .protocolError
                session.goAway(code: code)
                _ = write()
                lost("HTTP/2: \(error.reason); sent GOAWAY \(code)")
                return
            }
            pump()
        case .endOfInput:
            lost("closed the connection")
        case .failed(let reason):
            lost(reason)
        case .drained:
            pump()
        }
    }

    /// Hands the session's events to the relays they belong to and writes its frames, until nothing moves.
    func pump() {
        guard pumpGate.enter() else { return }
        defer { pumpGate.leave() }
        repeat {
            guard life.state != .closed else { return }
            let events = session.takeEvents()
            var touched: [ObjectIdentifier] = []
            for event in events { route(event, touched: &touched) }
            let wrote = write()
            for id in touched { users[id]?.relay?.pump() }
            if !events.isEmpty || wrote { pumpGate.askAgain() }
        } while pumpGate.takeAgain()
    }

    private func route(_ event: HTTP2Event, touched: inout [ObjectIdentifier]) {
        switch event {
        case .headers(let id, _), .data(let id, _), .endStream(let id), .resetReceived(let id, _),
            .resetSent(let id, _),
            .dataSent(let id, _):
            guard let owner = owners[id], let relay = users[owner]?.relay else {
                unowned(event)
                return
            }
            relay.handleUpstreamEvent(event)
            if !touched.contains(owner) { touched.append(owner) }
        case .streamClosed(let id, _):
            let owner = owners.removeValue(forKey: id)
            if let owner, let relay = users[owner]?.relay {
                relay.handleUpstreamEvent(event)
                if !touched.contains(owner) { touched.append(owner) }
            }
            perform(life.receive(.streamClosed))
        case .goAwayReceived:
            perform(life.receive(.goAwayReceived))
            broadcast(event, touched: &touched)
        case .settingsReceived:
            peerSettingsReceived = true
            broadcast(event, touched: &touched)
        case .goAwaySent(_, let code, _):
            guard code != .noError else { return }
            broadcast(event, touched: &touched)
            perform(life.receive(.broke))
        case .diagnostic(let text):
            lastDiagnostic = text
        }
    }

    /// An event on a stream no relay owns any more (its client left): its data is taken so the connection's
    /// window stays open, a response head gets the stream cancelled.
    private func unowned(_ event: HTTP2Event) {
        switch event {
        case .data(let id, let bytes): session.consume(streamID: id, count: bytes.count)
        case .headers(let id, _): session.reset(streamID: id, code: .cancel)
        default: return
        }
    }

    private func broadcast(_ event: HTTP2Event, touched: inout [ObjectIdentifier]) {
        for (id, user) in users {
            guard let relay = user.relay else { continue }
            relay.handleUpstreamEvent(event)
            if !touched.contains(id) { touched.append(id) }
        }
    }

    /// Writes the session's frames while the leg has room; whether anything was written.
    private func write(ignoringHighWater: Bool = false) -> Bool {
        do {
            return try leg.writeFrames(of: session, ignoringHighWater: ignoringHighWater)
        } catch {
            lost("HTTP/2: \(error)")
            return false
        }
    }

    // MARK: ending

    /// The connection broke: every relay using it learns why, and it closes.
    private func lost(_ reason: String) {
        guard life.state != .closed else { return }
        let relays = users.values.compactMap(\.relay)
        perform(life.receive(.broke))
        for relay in relays { relay.upstreamLost(reason) }
    }

    /// The proxy stops: GOAWAY and close.
    func stop() {
        stopping = true
        perform(life.receive(.stopping))
    }

    private func perform(_ actions: [SharedUpstreamLife.Action]) {
        for action in actions {
            switch action {
            case .scheduleIdleTimer:
                idleTimer?.cancel()
                // Outside the pool (its origin has enough) it goes at once.
                let idleTime = pool?.idleTime ?? .zero
                idleTimer = clock.schedule(after: idleTime, on: loop) { [weak self] in
                    guard let self else { return }
                    perform(life.receive(.idleTimeout))
                }
                leg.compactIdleMemory()
            case .cancelIdleTimer:
                idleTimer?.cancel()
                idleTimer = nil
            case .leavePool:
                pool?.remove(self)
            case .sendGoAway:
                if session.wantsRead { session.goAway() }
                _ = write(ignoringHighWater: true)
            case .close:
                idleTimer?.cancel()
                idleTimer = nil
                pool?.remove(self)
                closeLeg()
            }
        }
    }

    /// Sends what is queued (the GOAWAY), then close_notify and FIN, and closes once the upstream hangs up or two
    /// seconds passed; at once when the proxy stops.
    private func closeLeg() {
        guard !stopping else {
            leg.onEvent = nil
            leg.close()
            return
        }
        leg.onEvent = { [self] event in
            switch event {
            case .endOfInput, .failed: finalClose()
            case .data, .drained: return
            }
        }
        leg.finishWriting()
        leg.resumeReading()
        idleTimer = clock.schedule(after: 2, on: loop) { [self] in finalClose() }
    }

    private func finalClose() {
        idleTimer?.cancel()
        idleTimer = nil
        leg.onEvent = nil
        leg.close()
    }
}
