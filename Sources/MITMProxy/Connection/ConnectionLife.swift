import MITMCore

/// The engine's objects that a connection's states hold. The machine keeps them and hands them back in its actions
/// without looking inside, so that it runs (and is tested) without sockets.
package protocol ConnectionParts {
    /// A tunnel (CONNECT, SOCKS5, reverse, transparent) before interception: its first bytes and its upstream.
    associatedtype Tunnel
    /// An intercepted tunnel: its ClientHello, its verdict, and the upstream its relay's requests go to.
    associatedtype Interception
    /// A TLS leg in its handshake.
    associatedtype HandshakeLeg
    /// What an interception's requests go to once the client's handshake completes.
    associatedtype Upstream
    /// A relay: HTTP/1, HTTP/2, raw bytes, or the web UI.
    associatedtype Relay
}

/// Where the client is going: a tunnel's host and port.
package struct TunnelTarget: Sendable, Equatable {
    package let host: String
    package let port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}

/// The life of one client connection to the proxy, from its first byte to its close: its phases, an interception's
/// stages, and the deadline of each (the sweep reads it from the state). Events in, actions out; `ProxyConnection`
/// performs the actions on its sockets, legs and relays.
package struct ConnectionLife<Parts: ConnectionParts> {
    /// The configured waits, in the clock's nanoseconds (converted once: a relay's every read restarts its deadline).
    package struct Timeouts: Sendable, Equatable {
        /// For the proxy request, the tunnel's first bytes, the upstream, and the client's TLS handshake.
        package let handshake: UInt64
        /// For a relay without traffic.
        package let idle: UInt64
        /// The silence after which an HTTP/1 relay's idle upstream is offered to the pool.
        package let upstreamPark: UInt64

        package init(handshake: Duration, idle: Duration, upstreamPark: Duration) {
            self.handshake = ConnectionDeadline.nanoseconds(handshake)
            self.idle = ConnectionDeadline.nanoseconds(idle)
            self.upstreamPark = ConnectionDeadline.nanoseconds(upstreamPark)
        }

        /// `nanoseconds` as the log shows them.
        static func text(_ nanoseconds: UInt64) -> String { SecondsText.format(Double(nanoseconds) / 1e9) }
    }

    /// What a relay carries.
    package enum Relayed {
        /// Absolute-form requests to plain HTTP origins.
        case plainRequests
        /// A tunnel relayed untouched.
        case tunnel(Parts.Tunnel)
        case interception(Parts.Interception)
        /// Requests to the web UI.
        case webUI
    }

    package enum State {
        /// Reading the proxy request (or the first bytes that tell SOCKS from HTTP).
        case readingRequest(until: ConnectionDeadline)
        /// A SOCKS5 client's greeting, authentication and request.
        case negotiatingSOCKS(SOCKS5Handshake, until: ConnectionDeadline)
        /// CONNECT from a client on another machine, not answered yet: the upstream is reached first, so that a target
        /// on this machine gets a `403` instead of a `200`. The client is not read meanwhile.
        case awaitingTarget(Parts.Tunnel, until: ConnectionDeadline)
        /// The tunnel is answered: reading its first bytes (a ClientHello, or not TLS) while the upstream is reached.
        case peeking(Parts.Tunnel, until: ConnectionDeadline)
        /// The tunnel is relayed as it is once its upstream answers: the policy passes it through, or it is not TLS.
        case awaitingRawUpstream(Parts.Tunnel, until: ConnectionDeadline)
        /// Intercepting: the TCP connection to the upstream is being made.
        case reachingUpstream(Parts.Interception, until: ConnectionDeadline)
        /// Intercepting: the upstream's TLS handshake.
        case upstreamHandshake(Parts.Interception, Parts.HandshakeLeg, until: ConnectionDeadline)
        /// Intercepting: the client's handshake with the forged certificate; then the traffic goes to the upstream.
        case clientHandshake(Parts.Interception, Parts.HandshakeLeg, Parts.Upstream, until: ConnectionDeadline)
        /// Intercepting with both handshakes at once (first contact): the client's, with a certificate forged from its
        /// SNI and what the run learned of the host, and the upstream's. The relay starts when both are done.
        case overlapping(Parts.Interception, client: Parts.HandshakeLeg, Overlap, until: ConnectionDeadline)
        /// A relay carries the traffic (until idle, or until the client hangs up after the last byte).
        case relaying(Parts.Relay, for: Relayed, until: ConnectionDeadline)
        /// The proxy's last byte is written; waiting for the client to hang up.
        case lingering(until: ConnectionDeadline)
        /// Told to close while relaying: the relay closes its legs and reports back.
        case closing(Parts.Relay, for: Relayed)
        case closed
    }

    /// How far the two handshakes of an `overlapping` interception are.
    package struct Overlap {
        /// The client's handshake completed (its leg reads nothing until the relay starts).
        package var clientDone: Bool
        package var upstream: OverlappedUpstream

        package init(clientDone: Bool, upstream: OverlappedUpstream) {
            self.clientDone = clientDone
            self.upstream = upstream
        }
    }

    /// The upstream of an `overlapping` interception.
    package enum OverlappedUpstream {
        /// Its TCP connection is being made (it has its own timer).
        case connecting
        case handshaking(Parts.HandshakeLeg)
        /// Ready, or failed: what the relay's requests go to.
        case settled(Parts.Upstream)
    }

    package enum Event {
        /// The SOCKS5 handshake read bytes (the first of them told it from HTTP).
        case socksProgressed(SOCKS5Handshake)
        /// A tunnel from a client on another machine waits for its upstream before it is answered.
        case targetAwaited(Parts.Tunnel, TunnelTarget, now: UInt64)
        /// The tunnel was answered (or needs no answer): its first bytes are read next.
        case tunnelAnswered(Parts.Tunnel, TunnelTarget, now: UInt64)
        /// The first bytes are not to be intercepted: the tunnel waits for its upstream, then is relayed raw.
        case rawTunnelChosen
        /// The policy intercepts the tunnel.
        case interceptionStarted(Parts.Interception, now: UInt64)
        /// The upstream's TCP connection is there; its TLS handshake began.
        case upstreamHandshakeStarted(Parts.HandshakeLeg)
        /// A certificate was forged for `serverName`; the client's handshake began.
        case clientHandshakeStarted(Parts.HandshakeLeg, Parts.Upstream, serverName: String, now: UInt64)
        /// The client's handshake began before the upstream's ended (`overlapping`).
        case overlapStarted(Parts.HandshakeLeg, serverName: String, now: UInt64)
        /// The overlapped client handshake completed.
        case overlappedClientDone(now: UInt64)
        /// The overlapped upstream is ready, or failed.
        case overlappedUpstreamSettled(Parts.Upstream)
        /// A relay took the traffic. `headDeadline`: an HTTP/1 relay's deadline for the request head it reads, if any.
        case relayStarted(Parts.Relay, for: Relayed, headDeadline: UInt64?, now: UInt64)
        /// A `101 Switching Protocols` handed the relay's traffic to a raw relay.
        case relayUpgraded(Parts.Relay, now: UInt64)
        /// Bytes moved, or the relay's head deadline changed.
        case relayActivity(headDeadline: UInt64?, now: UInt64)
        /// The relay closed its legs.
        case relayClosed(reason: String)
        /// The proxy's last byte is on its way: wait `seconds` for the client to hang up.
        case linger(seconds: Double, now: UInt64)
        /// The state's deadline passed. `upstreamConnecting`: the tunnel's upstream connect is still under way (it has its
        /// own timer, which answers the client).
        case deadlinePassed(now: UInt64, upstreamConnecting: Bool)
        /// The registry's periodic sweep.
        case swept(now: UInt64)
        case close(reason: String)
    }

    /// An event the connection's states cannot take: the executor broke an ordering it guarantees.
    package enum ImpossibleEvent: String, Sendable, Equatable {
        case socksOutsideTheRequest = "the SOCKS5 handshake went on after the proxy request was read"
        case tunnelOutsideTheRequest = "a tunnel opened after the proxy request was handled"
        case rawTunnelWithoutPeeking = "a raw tunnel was chosen before the tunnel's first bytes were read"
        case interceptionWithoutPeeking = "an interception started before the tunnel's first bytes were read"
        case upstreamHandshakeOutsideReaching = "an upstream TLS handshake started while no upstream was being reached"
        case clientHandshakeOutsideInterception =
            "a client TLS handshake started outside an interception's upstream stages"
        case overlapOutsideReaching = "an overlapped client handshake started while no upstream was being reached"
        case overlapEventOutsideOverlap = "an overlapped handshake reported outside an overlap"
        case relayFromWrongPhase = "a relay started where none can (mid-handshake, lingering, or after another)"
        case upgradeWithoutARelay = "a relay was upgraded while the connection was not relaying"
        case activityWithoutARelay = "relay traffic was reported while the connection was not relaying"
        case relayClosedWithoutARelay = "a relay reported its close while the connection had none"
        case lingerAfterClose = "the connection was told to linger after it closed"
    }

    package enum Action {
        /// Log that `waitingFor` did not happen in time (on the tunnel to `host`, if there is one).
        case reportTimeout(host: String?, waitingFor: String)
        /// Log that the client's TLS handshake for `host` failed for `reason`.
        case reportClientHandshakeFailure(host: String, port: Int, reason: String)
        /// The upstream accepted the connection but never finished TLS: close the leg and forge for the client anyway,
        /// which then gets 502s naming `reason`, as after any upstream failure.
        case abandonUpstreamHandshake(Parts.Interception, Parts.HandshakeLeg, reason: String)
        /// The relay's deadline passed: let it answer what it can (a slow head, a paused exchange), else close the
        /// connection for `reason`.
        case offerDeadlineToRelay(Parts.Relay, otherwise: String)
        /// An HTTP/1 relay may park its idle upstream in the pool.
        case offerIdleUpstream(Parts.Relay)
        /// The relay may give back grown buffers.
        case compact(Parts.Relay)
        /// Both overlapped handshakes are done: start the relay between the client's leg and `upstream`.
        case relayOverlapped(Parts.Interception, client: Parts.HandshakeLeg, upstream: Parts.Upstream)
        /// Close the relay; it reports back with `relayClosed`.
        case closeRelay(Parts.Relay, reason: String)
        /// The relay closed: log the tunnel it carried, settle the interception's verdict.
        case relayEnded(Parts.Relay, for: Relayed, reason: String)
        /// Give up whatever reaching the tunnel's upstream holds.
        case dropUpstream(Parts.Tunnel)
        case closeHandshakeLeg(Parts.HandshakeLeg)
        /// Close an upstream that no relay will take.
        case releaseUpstream(Parts.Upstream)
        /// Give up the interception's upstream attempt and settle its verdict.
        case abandonInterception(Parts.Interception)
        case closeClient
        /// Leave the loop's registry: no more deadlines or sweeps.
        case leaveRegistry
        /// An event the state cannot take (the executor closes the connection, naming it).
        case impossible(ImpossibleEvent)
    }

    package private(set) var state: State
    /// Where the tunnel goes, once there is one.
    package private(set) var target: TunnelTarget?
    private let timeouts: Timeouts
    /// While relaying: when bytes last moved, and what the sweep did about the silence since.
    private var quietSince: UInt64 = 0
    private var offeredIdleUpstream = false
    private var compacted = false

    /// A connection accepted at `now`: it reads the proxy request.
    package init(timeouts: Timeouts, now: UInt64) {
        self.timeouts = timeouts
        state = .readingRequest(until: .after(nanoseconds: timeouts.handshake, .proxyRequest, now: now))
    }

    /// The current state's deadline; none once closing.
    package var deadline: ConnectionDeadline? {
        switch state {
        case .readingRequest(let until), .negotiatingSOCKS(_, let until), .lingering(let until),
            .awaitingTarget(_, let until), .peeking(_, let until), .awaitingRawUpstream(_, let until),
            .reachingUpstream(_, let until), .upstreamHandshake(_, _, let until), .clientHandshake(_, _, _, let until),
            .overlapping(_, _, _, let until), .relaying(_, _, let until):
            until
        case .closing, .closed:
            nil
        }
    }

    /// Whether the upstream's TCP connection is awaited for an interception (its TLS handshake starts next).
    package var reachesUpstream: Bool {
        switch state {
        case .reachingUpstream: true
        case .overlapping(_, _, let overlap, _):
            if case .connecting = overlap.upstream { true } else { false }
        default: false
        }
    }

    /// Whether the connection is closing or closed.
    package var isClosed: Bool {
        switch state {
        case .closing, .closed: true
        default: false
        }
    }

    /// Takes `event`; returns what to do, in order.
    package mutating func receive(_ event: Event) -> [Action] {
        switch event {
        case .socksProgressed(let handshake):
            switch state {
            case .readingRequest(let until), .negotiatingSOCKS(_, let until):
                state = .negotiatingSOCKS(handshake, until: until)
            default: return [.impossible(.socksOutsideTheRequest)]
            }
            return []
        case .targetAwaited(let tunnel, let target, let now):
            guard readsTheRequest else { return [.impossible(.tunnelOutsideTheRequest)] }
            self.target = target
            state = .awaitingTarget(
                tunnel,
                until: .after(
                    nanoseconds: timeouts.handshake, .upstream(host: target.host, port: target.port), now: now))
            return []
        case .tunnelAnswered(let tunnel, let target, let now):
            switch state {
            case .readingRequest, .negotiatingSOCKS, .awaitingTarget: break
            default: return [.impossible(.tunnelOutsideTheRequest)]
            }
            self.target = target
            let reason = TimeoutReason.firstTunnelBytes(host: target.host, port: target.port)
            state = .peeking(tunnel, until: .after(nanoseconds: timeouts.handshake, reason, now: now))
            return []
        case .rawTunnelChosen:
            guard case .peeking(let tunnel, let until) = state else { return [.impossible(.rawTunnelWithoutPeeking)] }
            state = .awaitingRawUpstream(tunnel, until: until)
            return []
        case .interceptionStarted(let interception, let now):
            guard case .peeking = state, let target else { return [.impossible(.interceptionWithoutPeeking)] }
            let reason = TimeoutReason.upstream(host: target.host, port: target.port)
            state = .reachingUpstream(interception, until: .after(nanoseconds: timeouts.handshake, reason, now: now))
            return []
        case .upstreamHandshakeStarted(let leg):
            switch state {
            case .reachingUpstream(let interception, let until):
                state = .upstreamHandshake(interception, leg, until: until)
            case .overlapping(let interception, let client, var overlap, let until):
                guard case .connecting = overlap.upstream else {
                    return [.impossible(.upstreamHandshakeOutsideReaching)]
                }
                overlap.upstream = .handshaking(leg)
                state = .overlapping(interception, client: client, overlap, until: until)
            default:
                return [.impossible(.upstreamHandshakeOutsideReaching)]
            }
            return []
        case .overlapStarted(let leg, let serverName, let now):
            let deadline = ConnectionDeadline.after(
                nanoseconds: timeouts.handshake, .clientHandshake(host: serverName), now: now)
            switch state {
            case .reachingUpstream(let interception, _):
                state = .overlapping(
                    interception, client: leg, Overlap(clientDone: false, upstream: .connecting), until: deadline)
            case .upstreamHandshake(let interception, let upstream, _):
                state = .overlapping(
                    interception, client: leg, Overlap(clientDone: false, upstream: .handshaking(upstream)),
                    until: deadline)
            default:
                return [.impossible(.overlapOutsideReaching)]
            }
            return []
        case .overlappedClientDone(let now):
            return overlappedClientDone(now: now)
        case .overlappedUpstreamSettled(let upstream):
            guard case .overlapping(let interception, let client, var overlap, let until) = state else {
                return [.impossible(.overlapEventOutsideOverlap)]
            }
            if case .settled = overlap.upstream { return [.impossible(.overlapEventOutsideOverlap)] }
            overlap.upstream = .settled(upstream)
            state = .overlapping(interception, client: client, overlap, until: until)
            return overlap.clientDone ? [.relayOverlapped(interception, client: client, upstream: upstream)] : []
        case .clientHandshakeStarted(let leg, let upstream, let serverName, let now):
            let deadline = ConnectionDeadline.after(
                nanoseconds: timeouts.handshake, .clientHandshake(host: serverName), now: now)
            switch state {
            case .reachingUpstream(let interception, _), .upstreamHandshake(let interception, _, _):
                state = .clientHandshake(interception, leg, upstream, until: deadline)
                return []
            default:
                return [.impossible(.clientHandshakeOutsideInterception)]
            }
        case .relayStarted(let relay, let relayed, let headDeadline, let now):
            switch state {
            case .readingRequest, .peeking, .awaitingRawUpstream, .clientHandshake, .overlapping:
                enterRelaying(relay, for: relayed, head: headDeadline, now: now)
                return []
            default:
                return [.impossible(.relayFromWrongPhase)]
            }
        case .relayUpgraded(let raw, let now):
            guard case .relaying(_, let relayed, _) = state else { return [.impossible(.upgradeWithoutARelay)] }
            enterRelaying(raw, for: relayed, head: nil, now: now)
            return []
        case .relayActivity(let headDeadline, let now):
            switch state {
            case .relaying(let relay, let relayed, _):
                enterRelaying(relay, for: relayed, head: headDeadline, now: now)
                return []
            case .closing:
                return []  // the relay's last bytes while it closes
            default:
                return [.impossible(.activityWithoutARelay)]
            }
        case .relayClosed(let reason):
            switch state {
            case .relaying(let relay, let relayed, _), .closing(let relay, let relayed):
                state = .closed
                return [.relayEnded(relay, for: relayed, reason: reason), .leaveRegistry]
            default:
                return [.impossible(.relayClosedWithoutARelay)]
            }
        case .linger(let seconds, let now):
            let deadline = ConnectionDeadline.after(seconds, .lingering, now: now)
            switch state {
            case .closing, .closed:
                return [.impossible(.lingerAfterClose)]
            case .relaying(let relay, let relayed, _):
                // A relay keeps its state while lingering: it still reads, and closes on the client's FIN.
                state = .relaying(relay, for: relayed, until: deadline)
                return []
            default:
                let actions = heldResources()
                state = .lingering(until: deadline)
                return actions
            }
        case .deadlinePassed(let now, let upstreamConnecting):
            return deadlinePassed(now: now, upstreamConnecting: upstreamConnecting)
        case .swept(let now):
            return swept(now: now)
        case .close(let reason):
            return close(reason: reason)
        }
    }

    /// Whether the proxy request is still being read (HTTP or SOCKS5).
    private var readsTheRequest: Bool {
        switch state {
        case .readingRequest, .negotiatingSOCKS: true
        default: false
        }
    }

    /// Relays from `now`: the idle deadline (or the request head's, if sooner) starts again.
    private mutating func enterRelaying(
        _ relay: Parts.Relay, for relayed: Relayed, head headDeadline: UInt64?, now: UInt64
    ) {
        quietSince = now
        offeredIdleUpstream = false
        compacted = false
        let idle = ConnectionDeadline.instant(nanoseconds: timeouts.idle, after: now)
        state = .relaying(
            relay, for: relayed, until: ConnectionDeadline(at: min(idle, headDeadline ?? .max), reason: .idle))
    }

    /// The overlapped client handshake completed: the relay starts now if the upstream is settled; otherwise the wait
    /// is the upstream's from here.
    private mutating func overlappedClientDone(now: UInt64) -> [Action] {
        guard case .overlapping(let interception, let client, var overlap, var until) = state, !overlap.clientDone
        else {
            return [.impossible(.overlapEventOutsideOverlap)]
        }
        overlap.clientDone = true
        if case .settled(let upstream) = overlap.upstream {
            state = .overlapping(interception, client: client, overlap, until: until)
            return [.relayOverlapped(interception, client: client, upstream: upstream)]
        }
        if let target {
            until = .after(nanoseconds: timeouts.handshake, .upstream(host: target.host, port: target.port), now: now)
        }
        state = .overlapping(interception, client: client, overlap, until: until)
        return []
    }

    private mutating func deadlinePassed(now: UInt64, upstreamConnecting: Bool) -> [Action] {
        guard var deadline else { return [] }
        let waitingFor = deadline.reason.waitingFor
        let host = target?.host
        switch state {
        case .awaitingTarget, .peeking, .awaitingRawUpstream, .reachingUpstream:
            if upstreamConnecting {
                // The upstream connect has its own timer (the same timeout) and answers the client with a 502.
                deadline.at = ConnectionDeadline.instant(1, after: now)
                restart(until: deadline)
                return []
            }
            return [.reportTimeout(host: host, waitingFor: waitingFor)] + close(reason: "timed out \(waitingFor)")
        case .upstreamHandshake(let interception, let leg, _):
            let reason = "TLS handshake timed out (no answer within \(Timeouts.text(timeouts.handshake)))"
            return [.abandonUpstreamHandshake(interception, leg, reason: reason)]
        case .overlapping(let interception, _, let overlap, _) where overlap.clientDone:
            switch overlap.upstream {
            case .connecting where upstreamConnecting:
                deadline.at = ConnectionDeadline.instant(1, after: now)
                restart(until: deadline)
                return []
            case .handshaking(let leg):
                let reason = "TLS handshake timed out (no answer within \(Timeouts.text(timeouts.handshake)))"
                return [.abandonUpstreamHandshake(interception, leg, reason: reason)]
            case .connecting, .settled:
                return [.reportTimeout(host: host, waitingFor: waitingFor)] + close(reason: "timed out \(waitingFor)")
            }
        case .clientHandshake, .overlapping:
            var actions: [Action] = [.reportTimeout(host: host, waitingFor: waitingFor)]
            if case .clientHandshake(let serverName) = deadline.reason, let target {
                let reason =
                    "the client did not finish the TLS handshake within \(Timeouts.text(timeouts.handshake))"
                actions.append(.reportClientHandshakeFailure(host: serverName, port: target.port, reason: reason))
            }
            return actions + close(reason: "timed out \(waitingFor)")
        case .relaying(let relay, _, _):
            if deadline.reason == .lingering { return close(reason: "done") }
            return [.offerDeadlineToRelay(relay, otherwise: "idle for \(Timeouts.text(timeouts.idle))")]
        case .readingRequest, .negotiatingSOCKS:
            return [.reportTimeout(host: nil, waitingFor: waitingFor)] + close(reason: "timed out \(waitingFor)")
        case .lingering:
            return close(reason: "timed out \(waitingFor)")
        case .closing, .closed:
            return []
        }
    }

    /// The same state with a later deadline.
    private mutating func restart(until deadline: ConnectionDeadline) {
        switch state {
        case .awaitingTarget(let tunnel, _): state = .awaitingTarget(tunnel, until: deadline)
        case .peeking(let tunnel, _): state = .peeking(tunnel, until: deadline)
        case .awaitingRawUpstream(let tunnel, _): state = .awaitingRawUpstream(tunnel, until: deadline)
        case .reachingUpstream(let interception, _): state = .reachingUpstream(interception, until: deadline)
        case .overlapping(let interception, let client, let overlap, _):
            state = .overlapping(interception, client: client, overlap, until: deadline)
        default: break
        }
    }

    /// After a second of silence a relay gives back grown buffers; after the park delay an HTTP/1 relay's idle
    /// upstream goes to the pool. Once each per silence.
    private mutating func swept(now: UInt64) -> [Action] {
        guard case .relaying(let relay, _, _) = state, now >= quietSince else { return [] }
        let silent = now - quietSince
        var actions: [Action] = []
        if !offeredIdleUpstream, silent >= timeouts.upstreamPark {
            offeredIdleUpstream = true
            actions.append(.offerIdleUpstream(relay))
        }
        if !compacted, silent >= 1_000_000_000 {
            compacted = true
            actions.append(.compact(relay))
        }
        return actions
    }

    private mutating func close(reason: String) -> [Action] {
        switch state {
        case .closing, .closed:
            return []
        case .relaying(let relay, let relayed, _):
            state = .closing(relay, for: relayed)
            return [.closeRelay(relay, reason: reason), .closeClient, .leaveRegistry]
        default:
            let actions = heldResources()
            state = .closed
            return actions + [.closeClient, .leaveRegistry]
        }
    }

    /// Lets go of what the state before a relay holds: the upstream being reached, handshake legs, an undecided verdict.
    private func heldResources() -> [Action] {
        switch state {
        case .awaitingTarget(let tunnel, _), .peeking(let tunnel, _), .awaitingRawUpstream(let tunnel, _):
            [.dropUpstream(tunnel)]
        case .reachingUpstream(let interception, _):
            [.abandonInterception(interception)]
        case .upstreamHandshake(let interception, let leg, _):
            [.closeHandshakeLeg(leg), .abandonInterception(interception)]
        case .clientHandshake(let interception, let leg, let upstream, _):
            [.closeHandshakeLeg(leg), .releaseUpstream(upstream), .abandonInterception(interception)]
        case .overlapping(let interception, let client, let overlap, _):
            switch overlap.upstream {
            case .connecting: [.closeHandshakeLeg(client), .abandonInterception(interception)]
            case .handshaking(let leg):
                [.closeHandshakeLeg(client), .closeHandshakeLeg(leg), .abandonInterception(interception)]
            case .settled(let upstream):
                [.closeHandshakeLeg(client), .releaseUpstream(upstream), .abandonInterception(interception)]
            }
        case .readingRequest, .negotiatingSOCKS, .relaying, .lingering, .closing, .closed:
            []
        }
    }
}

extension ConnectionLife.Relayed: Equatable where Parts.Tunnel: Equatable, Parts.Interception: Equatable {}

extension ConnectionLife.OverlappedUpstream: Equatable where Parts.HandshakeLeg: Equatable, Parts.Upstream: Equatable {}

extension ConnectionLife.Overlap: Equatable where Parts.HandshakeLeg: Equatable, Parts.Upstream: Equatable {}

extension ConnectionLife.State: Equatable
where
    Parts.Tunnel: Equatable, Parts.Interception: Equatable, Parts.HandshakeLeg: Equatable, Parts.Upstream: Equatable,
    Parts.Relay: Equatable
{}

extension ConnectionLife.Action: Equatable
where
    Parts.Tunnel: Equatable, Parts.Interception: Equatable, Parts.HandshakeLeg: Equatable, Parts.Upstream: Equatable,
    Parts.Relay: Equatable
{}
