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
    private let startedAt = Date()
    private var handshakeMilliseconds: Double?
    private var tlsVersion: String?
    private var alpn: String?
    private var silenceTimer: LoopTimer?
    private var counted = true
    /// When the ClientHello arrived, on the spare desk's monotonic clock.
    private let openedAt = SpareConnectionDesk.now
    private var published: Verdict?
    private var endReported = false
    private var ended = false
    /// Whether the desk was told of this connection's interception (so it must hear of its end).
    private var isSpareSibling = false
    private var identity: ClientIdentity
    /// Decided verdicts waiting for the client's process lookup, in order.
    private var waitingForIdentity: [(record: ConnectionVerdict, previous: Verdict?)]?
    private let probe: ProxyProbe?
    /// The host the verdict is about (set once the SNI is known).
    var host: String
    /// The certificate profile the client is shown.
    let profile: CertificateProfile
    /// The pin of the certificate the client was shown.
    lazy var shownCertificatePin = context.forger.leafPin

    /// `probe`: the connection checks the proxy itself, and its verdict stays out of the account.
    /// `processLookup`: the lookup of the client's process under way; verdicts decided before it answers wait for it,
    /// so that every record names the same client.
    init(context: ProxyContext, connectionID: Int, host: String, port: Int, offeredALPN: [String], identity: ClientIdentity,
         processLookup: ClientProcessLookup?, probe: ProxyProbe?, profile: CertificateProfile = .trusted) {
        self.context = context
        self.profile = profile
        machine = VerdictMachine(alsoRejectingCertificate: profile.alsoRejectingCertificate)
        self.connectionID = connectionID
        self.host = host
        self.port = port
        self.offeredALPN = offeredALPN
        self.identity = identity
        self.probe = probe
        context.verdicts.connectionStarted()
        if let processLookup {
            waitingForIdentity = []
            // Holds the tracker until the answer is in: a verdict decided meanwhile must still be published.
            processLookup.whenDone { [self] process, reason in
                self.identity.process = process
                self.identity.processUnknown = process == nil ? reason : nil
                let waiting = waitingForIdentity ?? []
                waitingForIdentity = nil
                for item in waiting {
                    var record = item.record
                    record.identity = self.identity
                    publish(record, replacing: item.previous)
                }
            }
        }
    }

    /// The client for a person (`curl (pid 812)`): complete once the connection is read, which waits for the process.
    var clientName: String { identity.label }

    /// Whether a verdict was decided.
    var isDecided: Bool { machine.verdict != nil }

    /// The handshake completed on `leg`: start the silence window.
    func handshakeCompleted(_ leg: TLSLeg, loop: EventLoop) {
        handshakeMilliseconds = Date().timeIntervalSince(startedAt) * 1000
        tlsVersion = leg.tls.protocolVersion
        alpn = leg.tls.negotiatedALPN
        observe(leg.tls.isResumed ? .sessionResumed : .certificateSent)
        observe(.handshakeCompleted)
        guard !isDecided else { return }
        silenceTimer = loop.schedule(after: context.configuration.silenceWindow) { [unowned self] in
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
            handshakeMilliseconds: handshakeMilliseconds, decidedAt: Date(), client: identity.address,
            profile: profile == .trusted ? nil : profile)
        record.identity = identity
        let previous = published
        published = verdict
        if waitingForIdentity != nil {
            waitingForIdentity?.append((record, previous))
        } else {
            publish(record, replacing: previous)
        }
    }

    private func publish(_ record: ConnectionVerdict, replacing previous: Verdict?) {
        let verdict = record.verdict
        if let probe {
            if probe == .trust, verdict.kind == .intercepted { context.verdicts.proveClient(record) }
            context.events.emit(.proxyProbe(record, probe))
        } else if verdict.kind == .refused, verdict.reason == .closedAfterHandshake || verdict.reason == .closedInHandshake {
            context.spares.closedWithoutRequest(record, openedAt: openedAt)
        } else {
            context.publish(record, replacing: previous)
            if verdict.kind == .intercepted {
                context.spares.intercepted(record, openedAt: openedAt)
                isSpareSibling = true
                reportEnd()
            }
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
        ended = true
        reportEnd()
    }

    /// Tells the spare-connection desk once that an intercepted connection it knows is gone (a verdict still waiting
    /// for the client's process reaches the desk later, and its end right after it).
    private func reportEnd() {
        guard ended, isSpareSibling, !endReported else { return }
        endReported = true
        context.spares.connectionEnded(connectionID)
    }

    deinit {
        silenceTimer?.cancel()
        if counted { context.verdicts.connectionDecided() }
        ended = true
        reportEnd()
    }
}
