import Foundation
import MITMCore
import MITMIO
import MITMTLS

/// Feeds one intercepted connection's observations to its `VerdictMachine` and publishes the verdict,
/// with the connection's TLS facts, when it is decided. Confined to the connection's loop.
// @unchecked Sendable: confined to one loop's queue; its silence timer fires on that queue.
final class VerdictTracker: @unchecked Sendable {
    private var machine: VerdictMachine
    private let context: ProxyContext
    private let connectionID: Int
    private let port: Int
    private let offeredALPN: [String]
    private let startedAt: Date
    private var handshakeMilliseconds: Double?
    private var tlsVersion: String?
    private var alpn: String?
    private var silenceTimer: (any ClockTimer)?
    private var counted = true
    /// When the ClientHello arrived, on the proxy's monotonic clock.
    private let openedAt: UInt64
    private var published: Verdict?
    private var endReported = false
    private let identity: ClientIdentity
    private let probe: ProxyProbe?
    /// The host the verdict is about (set once the SNI is known).
    var host: String
    /// The certificate profile the client is shown.
    let profile: CertificateProfile
    /// The pin of the certificate the client was shown.
    lazy var shownCertificatePin = context.forger.leafPin

    /// `probe`: the connection checks the proxy itself, and its verdict stays out of the account.
    init(
        context: ProxyContext, connectionID: Int, host: String, port: Int, offeredALPN: [String],
        identity: ClientIdentity,
        probe: ProxyProbe?, profile: CertificateProfile = .trusted
    ) {
        self.context = context
        openedAt = context.clock.now()
        startedAt = context.clock.wallNow()
        self.profile = profile
        machine = VerdictMachine(alsoRejectingCertificate: profile.alsoRejectingCertificate)
        self.connectionID = connectionID
        self.host = host
        self.port = port
        self.offeredALPN = offeredALPN
        self.identity = identity
        self.probe = probe
        context.verdicts.connectionStarted()
    }

    /// The client for a person (`curl (pid 812)`).
    var clientName: String { identity.label }

    /// Whether a verdict was decided.
    var isDecided: Bool { machine.verdict != nil }

    /// The handshake completed on `leg`: start the silence window.
    func handshakeCompleted(_ leg: TLSLeg, loop: EventLoop) {
        recordHandshake(leg)
        startSilenceWindow(loop: loop)
    }

    /// The handshake completed on `leg`; the silence window starts when the client's data is read
    /// (`startSilenceWindow`).
    func recordHandshake(_ leg: TLSLeg) {
        handshakeMilliseconds = context.clock.milliseconds(since: openedAt)
        tlsVersion = leg.tls.protocolVersion
        alpn = leg.tls.negotiatedALPN
        observe(leg.tls.isResumed ? .sessionResumed : .certificateSent)
        observe(.handshakeCompleted)
    }

    /// The client is read from now: silence from here on counts.
    func startSilenceWindow(loop: EventLoop) {
        guard !isDecided else { return }
        silenceTimer = context.clock.schedule(after: context.configuration.silenceWindow, on: loop) { [unowned self] in
            observe(.silenceWindowElapsed)
        }
    }

    /// Feeds an observation; publishes the verdict if it decides one.
    func observe(_ observation: ClientTLSObservation) {
        guard let verdict = machine.receive(observation) else { return }
        silenceTimer?.cancel()
        silenceTimer = nil
        var record = ConnectionVerdict(
            connectionID: connectionID, host: host, port: port, verdict: verdict, tlsVersion: tlsVersion, alpn: alpn,
            offeredALPN: offeredALPN, shownCertificatePin: shownCertificatePin, startedAt: startedAt,
            handshakeMilliseconds: handshakeMilliseconds, decidedAt: context.clock.wallNow(), client: identity.address,
            profile: profile == .trusted ? nil : profile)
        record.identity = identity
        let previous = published
        published = verdict
        publish(record, replacing: previous)
    }

    private func publish(_ record: ConnectionVerdict, replacing previous: Verdict?) {
        let verdict = record.verdict
        if let probe {
            if probe == .trust, verdict.kind == .intercepted { context.verdicts.proveClient(record) }
            context.events.emit(.proxyProbe(record, probe))
        } else if verdict.kind == .refused,
            verdict.reason == .closedAfterHandshake || verdict.reason == .closedInHandshake
        {
            context.spares.closedWithoutRequest(record, openedAt: openedAt)
        } else {
            context.publish(record, replacing: previous)
            if verdict.kind == .intercepted { context.spares.intercepted(record, openedAt: openedAt) }
        }
        // Only now: a held refusal is already counted by the desk, so pending never reads 0 in between.
        if counted {
            counted = false
            context.verdicts.connectionDecided()
        }
    }

    /// The connection is going away: an undecided verdict becomes inconclusive.
    func finish() {
        if !isDecided { observe(.stopped) }
        silenceTimer?.cancel()
        reportEnd()
    }

    /// Tells the spare-connection desk once that an intercepted connection is gone.
    private func reportEnd() {
        guard !endReported, published?.kind == .intercepted else { return }
        endReported = true
        context.spares.connectionEnded(connectionID)
    }

    deinit {
        silenceTimer?.cancel()
        if counted { context.verdicts.connectionDecided() }
        reportEnd()
    }
}
