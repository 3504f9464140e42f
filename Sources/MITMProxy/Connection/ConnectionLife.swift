import MITMCore

/// The engine's objects that a connection's states hold. The machine keeps them and hands them back in its actions
/// without looking inside, so that it runs (and is tested) without sockets.
package protocol ConnectionParts {
    /// A tunnel (CONNECT, SOCKS5, reverse, transparent) before interception: its target and its first bytes.
    associatedtype Tunnel
    /// An idle pooled TLS connection to the tunnel's origin.
    associatedtype PooledUpstream
    /// A TCP connect to the tunnel's origin under way (it has its own timer).
    associatedtype UpstreamAttempt
    /// A TCP connection to the tunnel's origin.
    associatedtype UpstreamConnection
    /// Why the tunnel's origin could not be reached.
    associatedtype UpstreamFailure
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
/// stages, and the deadline of each (the sweep reads it through `deadline`). Events in, actions out; `ProxyConnection`
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
        case awaitingTarget(Parts.Tunnel, UpstreamProgress, until: ConnectionDeadline)
        /// The tunnel is answered: reading its first bytes (a ClientHello, or not TLS) while the upstream is reached.
        case peeking(Parts.Tunnel, UpstreamProgress, until: ConnectionDeadline)
        /// The tunnel is relayed as it is once its upstream answers: the policy passes it through, or it is not TLS.
        case awaitingRawUpstream(Parts.Tunnel, UpstreamProgress, until: ConnectionDeadline)
        /// Intercepting: the TCP connection to the upstream is being made (`none` once it is, until its TLS handshake
        /// starts).
        case reachingUpstream(Parts.Interception, UpstreamProgress, until: ConnectionDeadline)
        /// Intercepting: the upstream's TLS handshake.
        case upstreamHandshake(Parts.Interception, Parts.HandshakeLeg, until: ConnectionDeadline)
        /// Intercepting: the client's handshake with the forged certificate; then the traffic goes to the upstream.
        case clientHandshake(Parts.Interception, Parts.HandshakeLeg, Parts.Upstream, until: ConnectionDeadline)
        /// Intercepting with both handshakes at once (first contact): the client's, with a certificate forged from its
        /// SNI and what the run learned of the host, and the upstream's. The relay starts when both are done.
        case overlapping(Parts.Interception, client: Parts.HandshakeLeg, Overlap, until: ConnectionDeadline)
        /// A relay carries the traffic (until idle, or until the client hangs up after the last byte). Its deadline is
        /// `relayUntil`, outside the state: traffic, reported several times per request, moves it.
        case relaying(Parts.Relay, for: Relayed)
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
        /// Its TCP connection is being made (`none` once it is, until its TLS handshake starts).
        case reaching(UpstreamProgress)
        case handshaking(Parts.HandshakeLeg)
        /// Ready, or failed: what the relay's requests go to.
        case settled(Parts.Upstream)
    }

    package enum Event {
        /// The SOCKS5 handshake read bytes (the first of them told it from HTTP).
        case socksProgressed(SOCKS5Handshake)
        /// A tunnel from a client on another machine waits for its upstream before it is answered.
        case targetAwaited(Parts.Tunnel, TunnelTarget, dialled: Parts.UpstreamAttempt, now: UInt64)
        /// The tunnel was answered (or needs no answer): its first bytes are read next, while `upstream` is reached.
        case tunnelAnswered(Parts.Tunnel, TunnelTarget, upstream: UpstreamProgress, now: UInt64)
        /// The awaited target's upstream settled and the tunnel was answered: its first bytes are read next.
        case targetAnswered(now: UInt64)
        /// The first bytes are not to be intercepted: the tunnel waits for its upstream, then is relayed raw.
        case rawTunnelChosen
        /// The policy intercepts the tunnel.
        case interceptionStarted(Parts.Interception, now: UInt64)
        /// The interception goes on over the tunnel's own upstream: dialled if it was deferred, taken once connected.
        case upstreamNeeded
        /// The tunnel's upstream is being dialled (it was deferred, or a pooled one did not fit).
        case upstreamDialled(Parts.UpstreamAttempt)
        /// The upstream's TCP connection is there.
        case upstreamConnected(Parts.UpstreamConnection)
        /// The upstream could not be reached.
        case upstreamFailed(Parts.UpstreamFailure)
        /// The connection took the tunnel's pooled or connected upstream (a reused connection, a server speaking first).
        case upstreamTaken
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
        /// The state's deadline passed.
        case deadlinePassed(now: UInt64)
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
        case targetAnsweredUnsettled = "an awaited target was answered before its upstream settled, or none was awaited"
        case upstreamNeededWithoutOne =
            "an interception asked for the tunnel's upstream outside its reaching stage, or with none to dial or await"
        case dialWithUpstreamHeld = "an upstream was dialled while the tunnel had one, or had no tunnel"
        case upstreamSettledWithoutAttempt = "an upstream connect settled while none was under way"
        case upstreamTakenWithoutOne = "an upstream was taken while the tunnel held no pooled or connected one"
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
        /// Dial the tunnel's upstream (report `upstreamDialled`).
        case dialUpstream(TunnelTarget)
        /// The awaited target's upstream settled: refuse the client (a target on this machine), or answer it and report
        /// `targetAnswered`.
        case answerTarget(Parts.Tunnel, failure: Parts.UpstreamFailure?)
        /// The upstream connected while the client has not spoken: watch it in case it speaks first.
        case watchServerFirst(Parts.Tunnel, Parts.UpstreamConnection)
        /// Relay the raw tunnel over its connected upstream (handed on: the machine holds it no more).
        case relayRawTunnel(Parts.Tunnel, Parts.UpstreamConnection)
        /// The raw tunnel's upstream could not be reached: tell the client what can be told, and close.
        case rawTunnelUnreachable(Parts.Tunnel, Parts.UpstreamFailure)
        /// Start the interception's upstream TLS over its connection (handed on: the machine holds it no more).
        case secureUpstream(Parts.Interception, Parts.UpstreamConnection)
        /// The interception's upstream could not be reached: forge for the client anyway, which then gets 502s.
        case interceptionUnreachable(Parts.Interception, Parts.UpstreamFailure)
        /// Let go of the tunnel's upstream connect under way.
        case cancelUpstreamAttempt(Parts.UpstreamAttempt)
        /// Close a pooled upstream the tunnel will not use.
        case closePooledUpstream(Parts.PooledUpstream)
        /// Close a connected upstream no one took.
        case closeUpstreamConnection(Parts.UpstreamConnection)
        case closeHandshakeLeg(Parts.HandshakeLeg)
        /// Close an upstream that no relay will take.
        case releaseUpstream(Parts.Upstream)
        /// Settle the verdict of an interception that ends before its relay.
        case abandonInterception(Parts.Interception)
        case closeClient
        /// Leave the loop's registry: no more deadlines or sweeps.
        case leaveRegistry
        /// An event the state cannot take (the executor closes the connection, naming it).
        case impossible(ImpossibleEvent)
    }

    package private(set) var state: State {
        didSet {
            if case .relaying = state {} else { relayUntil = nil }
        }
    }
    /// The deadline while relaying (idle, the relay's head deadline, or lingering); nil in every other state, so that
    /// reported traffic is checked and recorded without copying the state out of its enum.
    private var relayUntil: ConnectionDeadline?
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
            .awaitingTarget(_, _, let until), .peeking(_, _, let until), .awaitingRawUpstream(_, _, let until),
            .reachingUpstream(_, _, let until), .upstreamHandshake(_, _, let until),
            .clientHandshake(_, _, _, let until),
            .overlapping(_, _, _, let until):
            until
        case .relaying:
            relayUntil
        case .closing, .closed:
            nil
        }
    }

    /// Whether the upstream's TCP connection is awaited for an interception (its TLS handshake starts next).
    package var reachesUpstream: Bool {
        switch state {
        case .reachingUpstream: true
        case .overlapping(_, _, let overlap, _):
            if case .reaching = overlap.upstream { true } else { false }
        default: false
        }
    }

    /// How far the tunnel's own upstream is, while a state waits for it (nil in the others).
    package var upstreamProgress: UpstreamProgress? {
        switch state {
        case .awaitingTarget(_, let progress, _), .peeking(_, let progress, _),
            .awaitingRawUpstream(_, let progress, _),
            .reachingUpstream(_, let progress, _):
            progress
        case .overlapping(_, _, let overlap, _):
            if case .reaching(let progress) = overlap.upstream { progress } else { nil }
        default: nil
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
    package mutating func receive(_ event: consuming Event) -> [Action] {
        switch consume event {
        case .socksProgressed(let handshake):
            switch state {
            case .readingRequest(let until), .negotiatingSOCKS(_, let until):
                state = .negotiatingSOCKS(handshake, until: until)
            default: return [.impossible(.socksOutsideTheRequest)]
            }
            return []
        case .targetAwaited(let tunnel, let target, let attempt, let now):
            guard readsTheRequest else {
                return [.cancelUpstreamAttempt(attempt), .impossible(.tunnelOutsideTheRequest)]
            }
            self.target = target
            state = .awaitingTarget(
                tunnel, .connecting(attempt),
                until: .after(
                    nanoseconds: timeouts.handshake, .upstream(host: target.host, port: target.port), now: now))
            return []
        case .tunnelAnswered(let tunnel, let target, let upstream, let now):
            guard readsTheRequest else { return Self.releasing(upstream) + [.impossible(.tunnelOutsideTheRequest)] }
            self.target = target
            state = .peeking(tunnel, upstream, until: firstBytesDeadline(target, now: now))
            return []
        case .targetAnswered(let now):
            return targetAnswered(now: now)
        case .rawTunnelChosen:
            return rawTunnelChosen()
        case .interceptionStarted(let interception, let now):
            guard case .peeking(_, let upstream, _) = state, let target else {
                return [.impossible(.interceptionWithoutPeeking)]
            }
            let reason = TimeoutReason.upstream(host: target.host, port: target.port)
            state = .reachingUpstream(
                interception, upstream, until: .after(nanoseconds: timeouts.handshake, reason, now: now))
            return []
        case .upstreamNeeded:
            return upstreamNeeded()
        case .upstreamDialled(let attempt):
            return upstreamDialled(attempt)
        case .upstreamConnected(let connection):
            return upstreamSettled(.connected(connection))
        case .upstreamFailed(let failure):
            return upstreamSettled(.failed(failure))
        case .upstreamTaken:
            switch upstreamProgress {
            case .pooled?, .connected?: progress(.none)
            default: return [.impossible(.upstreamTakenWithoutOne)]
            }
            return []
        case .upstreamHandshakeStarted(let leg):
            switch state {
            case .reachingUpstream(let interception, let upstream, let until):
                state = .upstreamHandshake(interception, leg, until: until)
                return Self.releasing(upstream)
            case .overlapping(let interception, let client, var overlap, let until):
                guard case .reaching(let upstream) = overlap.upstream else {
                    return [.impossible(.upstreamHandshakeOutsideReaching)]
                }
                overlap.upstream = .handshaking(leg)
                state = .overlapping(interception, client: client, overlap, until: until)
                return Self.releasing(upstream)
            default:
                return [.impossible(.upstreamHandshakeOutsideReaching)]
            }
        case .overlapStarted(let leg, let serverName, let now):
            let deadline = ConnectionDeadline.after(
                nanoseconds: timeouts.handshake, .clientHandshake(host: serverName), now: now)
            switch state {
            case .reachingUpstream(let interception, let upstream, _):
                state = .overlapping(
                    interception, client: leg, Overlap(clientDone: false, upstream: .reaching(upstream)),
                    until: deadline)
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
            let held: [Action] =
                if case .reaching(let progress) = overlap.upstream { Self.releasing(progress) } else { [] }
            overlap.upstream = .settled(upstream)
            state = .overlapping(interception, client: client, overlap, until: until)
            return held
                + (overlap.clientDone ? [.relayOverlapped(interception, client: client, upstream: upstream)] : [])
        case .clientHandshakeStarted(let leg, let upstream, let serverName, let now):
            let deadline = ConnectionDeadline.after(
                nanoseconds: timeouts.handshake, .clientHandshake(host: serverName), now: now)
            switch state {
            case .reachingUpstream(let interception, let progress, _):
                state = .clientHandshake(interception, leg, upstream, until: deadline)
                return Self.releasing(progress)
            case .upstreamHandshake(let interception, _, _):
                state = .clientHandshake(interception, leg, upstream, until: deadline)
                return []
            default:
                return [.impossible(.clientHandshakeOutsideInterception)]
            }
        case .relayStarted(let relay, let relayed, let headDeadline, let now):
            switch state {
            case .readingRequest, .peeking, .awaitingRawUpstream, .clientHandshake, .overlapping:
                // A tunnel's upstream no one took goes: the transparent HTTP relay dials its own.
                let held: [Action] = if let upstream = upstreamProgress { Self.releasing(upstream) } else { [] }
                enterRelaying(relay, for: relayed, head: headDeadline, now: now)
                return held
            default:
                return [.impossible(.relayFromWrongPhase)]
            }
        case .relayUpgraded(let raw, let now):
            guard case .relaying(_, let relayed) = state else { return [.impossible(.upgradeWithoutARelay)] }
            enterRelaying(raw, for: relayed, head: nil, now: now)
            return []
        case .relayActivity(let headDeadline, let now):
            guard relayUntil != nil else {
                if case .closing = state { return [] }  // the relay's last bytes while it closes
                return [.impossible(.activityWithoutARelay)]
            }
            trafficMoved(head: headDeadline, now: now)
            return []
        case .relayClosed(let reason):
            switch state {
            case .relaying(let relay, let relayed), .closing(let relay, let relayed):
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
            case .relaying:
                // A relay keeps its state while lingering: it still reads, and closes on the client's FIN.
                relayUntil = deadline
                return []
            default:
                let actions = heldResources()
                state = .lingering(until: deadline)
                return actions
            }
        case .deadlinePassed(let now):
            return deadlinePassed(now: now)
        case .swept(let now):
            return swept(now: now)
        case .close(let reason):
            return close(reason: reason)
        }
    }

    private func firstBytesDeadline(_ target: TunnelTarget, now: UInt64) -> ConnectionDeadline {
        .after(nanoseconds: timeouts.handshake, .firstTunnelBytes(host: target.host, port: target.port), now: now)
    }

    /// The awaited target was answered: the tunnel's first bytes are read next, and a connected upstream is watched in
    /// case it speaks first.
    private mutating func targetAnswered(now: UInt64) -> [Action] {
        guard case .awaitingTarget(let tunnel, let upstream, _) = state, let target else {
            return [.impossible(.targetAnsweredUnsettled)]
        }
        switch upstream {
        case .connected(let connection):
            state = .peeking(tunnel, upstream, until: firstBytesDeadline(target, now: now))
            return [.watchServerFirst(tunnel, connection)]
        case .failed:
            state = .peeking(tunnel, upstream, until: firstBytesDeadline(target, now: now))
            return []
        case .none, .pooled, .deferred, .connecting:
            return [.impossible(.targetAnsweredUnsettled)]
        }
    }

    /// A raw tunnel needs its own TCP connection (a pooled upstream has TLS on it): dialled unless under way; relayed
    /// once connected.
    private mutating func rawTunnelChosen() -> [Action] {
        guard case .peeking(let tunnel, let upstream, let until) = state, let target else {
            return [.impossible(.rawTunnelWithoutPeeking)]
        }
        state = .awaitingRawUpstream(tunnel, .none, until: until)
        switch upstream {
        case .none, .deferred:
            return [.dialUpstream(target)]
        case .pooled(let entry):
            return [.closePooledUpstream(entry), .dialUpstream(target)]
        case .connecting:
            state = .awaitingRawUpstream(tunnel, upstream, until: until)
            return []
        case .connected(let connection):
            return [.relayRawTunnel(tunnel, connection)]
        case .failed(let failure):
            state = .awaitingRawUpstream(tunnel, upstream, until: until)
            return [.rawTunnelUnreachable(tunnel, failure)]
        }
    }

    /// The interception's stage that reaches the upstream, and the interception.
    private var reachingInterception: Parts.Interception? {
        switch state {
        case .reachingUpstream(let interception, _, _): interception
        case .overlapping(let interception, _, let overlap, _):
            if case .reaching = overlap.upstream { interception } else { nil }
        default: nil
        }
    }

    private mutating func upstreamNeeded() -> [Action] {
        guard let interception = reachingInterception, let upstream = upstreamProgress, let target else {
            return [.impossible(.upstreamNeededWithoutOne)]
        }
        switch upstream {
        case .deferred:
            return [.dialUpstream(target)]
        case .connecting:
            return []
        case .connected(let connection):
            progress(.none)
            return [.secureUpstream(interception, connection)]
        case .failed(let failure):
            return [.interceptionUnreachable(interception, failure)]
        case .none, .pooled:
            return [.impossible(.upstreamNeededWithoutOne)]
        }
    }

    private mutating func upstreamDialled(_ attempt: Parts.UpstreamAttempt) -> [Action] {
        switch state {
        case .awaitingRawUpstream, .reachingUpstream, .overlapping:
            switch upstreamProgress {
            case .none?, .deferred?:
                progress(.connecting(attempt))
                return []
            default: break
            }
        default: break
        }
        return [.cancelUpstreamAttempt(attempt), .impossible(.dialWithUpstreamHeld)]
    }

    /// The connect under way ended with `settled` (`connected` or `failed`): what waits for it goes on.
    private mutating func upstreamSettled(_ settled: UpstreamProgress) -> [Action] {
        guard case .connecting? = upstreamProgress else {
            return Self.releasing(settled) + [.impossible(.upstreamSettledWithoutAttempt)]
        }
        progress(settled)
        switch (state, settled) {
        case (.awaitingTarget(let tunnel, _, _), .failed(let failure)):
            return [.answerTarget(tunnel, failure: failure)]
        case (.awaitingTarget(let tunnel, _, _), _):
            return [.answerTarget(tunnel, failure: nil)]
        case (.peeking(let tunnel, _, _), .connected(let connection)):
            return [.watchServerFirst(tunnel, connection)]
        case (.peeking, _):
            return []  // a failure is told once the tunnel's first bytes show what it needs
        case (.awaitingRawUpstream(let tunnel, _, _), .connected(let connection)):
            progress(.none)
            return [.relayRawTunnel(tunnel, connection)]
        case (.awaitingRawUpstream(let tunnel, _, _), .failed(let failure)):
            return [.rawTunnelUnreachable(tunnel, failure)]
        default:
            return upstreamNeeded()  // an interception's, which needs it
        }
    }

    /// The same state with the tunnel's upstream at `upstream`.
    private mutating func progress(_ upstream: UpstreamProgress) {
        switch state {
        case .awaitingTarget(let tunnel, _, let until): state = .awaitingTarget(tunnel, upstream, until: until)
        case .peeking(let tunnel, _, let until): state = .peeking(tunnel, upstream, until: until)
        case .awaitingRawUpstream(let tunnel, _, let until):
            state = .awaitingRawUpstream(tunnel, upstream, until: until)
        case .reachingUpstream(let interception, _, let until):
            state = .reachingUpstream(interception, upstream, until: until)
        case .overlapping(let interception, let client, var overlap, let until):
            guard case .reaching = overlap.upstream else { return }
            overlap.upstream = .reaching(upstream)
            state = .overlapping(interception, client: client, overlap, until: until)
        default: break
        }
    }

    /// What letting go of `upstream` takes: an attempt is cancelled, a socket closed.
    private static func releasing(_ upstream: UpstreamProgress) -> [Action] {
        switch upstream {
        case .pooled(let entry): [.closePooledUpstream(entry)]
        case .connecting(let attempt): [.cancelUpstreamAttempt(attempt)]
        case .connected(let connection): [.closeUpstreamConnection(connection)]
        case .none, .deferred, .failed: []
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
        state = .relaying(relay, for: relayed)
        trafficMoved(head: headDeadline, now: now)
    }

    /// The relay moved bytes at `now`: the idle deadline (or the request head's, if sooner) starts again.
    private mutating func trafficMoved(head headDeadline: UInt64?, now: UInt64) {
        quietSince = now
        offeredIdleUpstream = false
        compacted = false
        let idle = ConnectionDeadline.instant(nanoseconds: timeouts.idle, after: now)
        relayUntil = ConnectionDeadline(at: min(idle, headDeadline ?? .max), reason: .idle)
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

    private mutating func deadlinePassed(now: UInt64) -> [Action] {
        guard var deadline else { return [] }
        let waitingFor = deadline.reason.waitingFor
        let host = target?.host
        switch state {
        case .awaitingTarget, .peeking, .awaitingRawUpstream, .reachingUpstream:
            if case .connecting? = upstreamProgress {
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
            case .reaching(.connecting):
                deadline.at = ConnectionDeadline.instant(1, after: now)
                restart(until: deadline)
                return []
            case .handshaking(let leg):
                let reason = "TLS handshake timed out (no answer within \(Timeouts.text(timeouts.handshake)))"
                return [.abandonUpstreamHandshake(interception, leg, reason: reason)]
            case .reaching, .settled:
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
        case .relaying(let relay, _):
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
        case .awaitingTarget(let tunnel, let upstream, _): state = .awaitingTarget(tunnel, upstream, until: deadline)
        case .peeking(let tunnel, let upstream, _): state = .peeking(tunnel, upstream, until: deadline)
        case .awaitingRawUpstream(let tunnel, let upstream, _):
            state = .awaitingRawUpstream(tunnel, upstream, until: deadline)
        case .reachingUpstream(let interception, let upstream, _):
            state = .reachingUpstream(interception, upstream, until: deadline)
        case .overlapping(let interception, let client, let overlap, _):
            state = .overlapping(interception, client: client, overlap, until: deadline)
        default: break
        }
    }

    /// After a second of silence a relay gives back grown buffers; after the park delay an HTTP/1 relay's idle
    /// upstream goes to the pool. Once each per silence.
    private mutating func swept(now: UInt64) -> [Action] {
        guard case .relaying(let relay, _) = state, now >= quietSince else { return [] }
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
        case .relaying(let relay, let relayed):
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
        case .awaitingTarget(_, let upstream, _), .peeking(_, let upstream, _),
            .awaitingRawUpstream(_, let upstream, _):
            Self.releasing(upstream)
        case .reachingUpstream(let interception, let upstream, _):
            Self.releasing(upstream) + [.abandonInterception(interception)]
        case .upstreamHandshake(let interception, let leg, _):
            [.closeHandshakeLeg(leg), .abandonInterception(interception)]
        case .clientHandshake(let interception, let leg, let upstream, _):
            [.closeHandshakeLeg(leg), .releaseUpstream(upstream), .abandonInterception(interception)]
        case .overlapping(let interception, let client, let overlap, _):
            switch overlap.upstream {
            case .reaching(let upstream):
                [.closeHandshakeLeg(client)] + Self.releasing(upstream) + [.abandonInterception(interception)]
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

/// Every part is Equatable (the tests' stand-ins are).
package protocol EquatableConnectionParts: ConnectionParts
where
    Tunnel: Equatable, Interception: Equatable, HandshakeLeg: Equatable, Upstream: Equatable, Relay: Equatable,
    PooledUpstream: Equatable, UpstreamAttempt: Equatable, UpstreamConnection: Equatable, UpstreamFailure: Equatable
{}

extension ConnectionLife.OverlappedUpstream: Equatable where Parts: EquatableConnectionParts {}

extension ConnectionLife.Overlap: Equatable where Parts: EquatableConnectionParts {}

extension ConnectionLife.State: Equatable where Parts: EquatableConnectionParts {}

extension ConnectionLife.Action: Equatable where Parts: EquatableConnectionParts {}
