import Foundation
import MITMCore
import MITMHTTP2
import MITMIO

/// Relays one intercepted HTTP/2 connection: a server session toward the client, and an upstream HTTP/2
/// connection (`SharedHTTP2Upstream`, possibly shared with other client connections to the same origin):
/// every client stream relayed to one upstream stream and back.
///
/// Flow control is the backpressure: body bytes received on a stream are handed to the other session's
/// queue, and the receiving stream's window reopens only when the other session has put those bytes in
/// DATA frames (its `dataSent` event). Each session's output is produced only while its socket holds
/// less than `highWater` bytes, so a slow reader stops the sender through the windows instead of
/// growing buffers: per stream the proxy holds at most one stream window of body, per connection at
/// most the streams' windows. Confined to the connection's loop.
final class HTTP2Relay {
    /// Where streams go.
    enum Mode {
        /// To this upstream HTTP/2 connection, which other client connections may share.
        case intercepted(host: String, port: Int, upstream: SharedHTTP2Upstream)
        /// Nowhere: the upstream is unreachable or untrusted, so every stream gets a 502 naming `reason`.
        case failing(host: String, port: Int, reason: String)
    }

    /// What both sessions advertise.
    static let settings: HTTP2Settings = {
        var settings = HTTP2Settings()
        settings.maxConcurrentStreams = 100
        settings.streamWindow = 256 * 1024
        settings.connectionWindow = 1024 * 1024
        settings.maxHeaderListSize = 64 * 1024
        settings.enablePush = false
        return settings
    }()

    /// Bytes a leg may hold unsent before the relay stops producing frames for it.
    static let highWater = 256 * 1024

    let connectionID: Int
    let context: ProxyContext
    /// The loop the relay lives on (its timers run there, and the web UI's answers come back to it).
    let loop: EventLoop
    let host: String
    let port: Int
    let client: Leg
    /// The upstream connection the streams go to (nil in failing mode).
    let upstreamConnection: SharedHTTP2Upstream?
    /// Why there is no upstream (failing mode).
    let unreachableReason: String?
    let clientSession: HTTP2Session
    /// The upstream connection's session, where this relay's upstream streams live.
    var upstreamSession: HTTP2Session? { upstreamConnection?.session }
    /// Relayed streams by client stream ID.
    var streams = HTTP2StreamTable<HTTP2RelayStream>()
    /// Client stream ID by upstream stream ID, while the upstream stream is attached.
    var clientStreamForUpstream = HTTP2StreamTable<Int32>()
    /// Streams the relay reset itself (as opposed to nghttp2 answering bad frames), per side.
    var requestedClientResets = HTTP2StreamTable<Void>()
    var requestedUpstreamResets = HTTP2StreamTable<Void>()
    /// nghttp2's latest explanation of what the client did wrong, for log lines.
    var lastClientDiagnostic: String?
    /// Serving, finishing or closed, and whether new streams may go upstream (see `HTTP2Relay+Ending.swift`).
    var life: HTTP2RelayLife
    var pumpGate = PumpGate()
    /// A stream moved since the owner was last told (see `pump`).
    var streamsMoved = false

    var records: ExchangeRecordFactory
    /// The `:authority` streams go upstream with, behind a `--reverse` port (the client's names the proxy); nil keeps the client's.
    var originAuthority: String?
    /// The QA rules' state per stream (see `HTTP2Relay+Rules.swift`).
    var ruled = HTTP2RelayRules()
    /// DNS/connect/TLS costs of the upstream connection, charged to the first stream (HAR timings).
    var newConnectionTimings: UpstreamConnectionTimings? {
        get { records.pendingConnectionTimings }
        set { records.pendingConnectionTimings = newValue }
    }

    /// The connection that owns the relay.
    unowned var owner: RelayOwner?

    init(connectionID: Int, context: ProxyContext, loop: EventLoop, client: Leg, mode: Mode) throws(HTTP2SessionError) {
        self.connectionID = connectionID
        self.context = context
        self.loop = loop
        self.client = client
        records = ExchangeRecordFactory(
            connectionID: connectionID, captureLimit: context.configuration.bodyCaptureLimit,
            client: client,
            dropsProxyAuthorization: context.configuration.proxyCredentials != nil, replays: context.replays)
        clientSession = try HTTP2Session(role: .server, settings: Self.settings)
        switch mode {
        case .intercepted(let host, let port, let connection):
            self.host = host
            self.port = port
            upstreamConnection = connection
            unreachableReason = nil
            life = HTTP2RelayLife(upstreamAvailable: connection.isAvailable)
        case .failing(let host, let port, let reason):
            self.host = host
            self.port = port
            upstreamConnection = nil
            unreachableReason = reason
            life = HTTP2RelayLife(upstreamAvailable: false)
        }
    }

    /// Sends the client its preface, joins the upstream connection and starts reading the client.
    func start() {
        client.onEvent = { [unowned self] event in self.clientLegEvent(event) }
        upstreamConnection?.attach(self)
        offerExtendedConnectIfUpstreamDoes()
        pump()
        client.resumeReading()
        if let ending = client.takeUntoldInputEnding() { clientLegEvent(ending) }
    }

    // MARK: the client leg

    private func clientLegEvent(_ event: LegEvent) {
        guard life.isServing else {
            linger(event)
            return
        }
        switch event {
        case .data(let bytes):
            do {
                try clientSession.receive(bytes)
            } catch {
                clientSessionFailed(error)
                return
            }
            pump()
        case .endOfInput:
            finish(
                streams.isEmpty
                    ? "the client closed the connection" : "the client closed the connection with streams open",
                clientGone: true)
        case .failed(let reason):
            finish("client: \(reason)", clientGone: true)
        case .drained:
            pump()
        }
    }

    /// The client sent something that is not HTTP/2 at all (no preface), or flooded the session.
    private func clientSessionFailed(_ error: HTTP2SessionError) {
        let what =
            error.isBadPreface
            ? "it negotiated h2 but did not send the HTTP/2 connection preface"
            : "HTTP/2: \(error.reason)"
        let code: HTTP2ErrorCode = error.isFlood ? .enhanceYourCalm : .protocolError
        context.events.emit(
            .badRequest(
                connectionID: connectionID, peer: clientDescription,
                reason: "\(what); sent GOAWAY \(code)"))
        clientSession.goAway(code: code)
        finish("client protocol error")
    }

    /// The upstream connection ended or broke: streams waiting for it fail, and the client is told to
    /// open new streams elsewhere.
    func upstreamLost(_ reason: String) {
        perform(life.receive(.upstreamWentAway))
        let waiting = clientStreamForUpstream
        if !waiting.isEmpty {
            context.events.emit(.upstreamFailed(connectionID: connectionID, host: host, port: port, reason: reason))
        }
        for (upstreamID, clientID) in waiting {
            detachUpstream(upstreamID)
            upstreamStreamFailed(clientID, code: nil, reason: "upstream \(reason)")
        }
        pump()
    }

    var clientDescription: String {
        client.peerDescription
    }

    // MARK: moving frames

    /// Handles what the client session reported, writes its frames and lets the upstream connection move (which
    /// hands this relay its streams' events), until nothing moves. Re-entered from the upstream connection, it
    /// only asks the running loop for another round.
    /// Only a stream's progress counts as activity for the idle timeout: a client that holds a window at
    /// zero and sends PINGs is as idle as a silent one. The owner hears of it once per run, however many events
    /// moved streams (each report is a turn of the connection's machine).
    func pump() {
        guard pumpGate.enter() else { return }
        repeat {
            if !life.isServing { break }
            let clientEvents = clientSession.takeEvents()
            if !streamsMoved { streamsMoved = clientEvents.contains(where: \.movesAStream) }
            for event in clientEvents where !life.isClosed { handleClientEvent(event) }
            if !life.isServing { break }
            var moved = !clientEvents.isEmpty
            if !clientPrefaceHeld { moved = write(clientSession, to: client) || moved }
            upstreamConnection?.pump()
            if !clientSession.wantsWrite {
                let actions = life.receive(.clientOutputFlushed)
                perform(actions)
                moved = moved || !actions.isEmpty
            }
            if moved { pumpGate.askAgain() }
        } while pumpGate.takeAgain()
        pumpGate.leave()
        if streamsMoved {
            streamsMoved = false
            // Once finishing, the connection's deadline is the linger's.
            if life.isServing { owner?.relayActivity(headDeadline: nil) }
        }
        if life.isServing && clientSession.isFinished {
            finish("the connection ended")
        }
    }

    /// Whether the client waits for the proxy's SETTINGS until the upstream's have come: then the client's first
    /// SETTINGS already say whether it may open WebSockets (extended CONNECT), as a browser decides on the first.
    /// Nothing is lost by waiting: no stream can go upstream before the upstream's SETTINGS either.
    var clientPrefaceHeld: Bool {
        guard let upstreamConnection else { return false }
        return !upstreamConnection.peerSettingsReceived && upstreamConnection.isAvailable
    }

    /// Writes the session's pending frames while the leg has room; whether anything was written.
    func write(_ session: HTTP2Session, to leg: Leg, ignoringHighWater: Bool = false) -> Bool {
        do {
            return try leg.writeFrames(of: session, ignoringHighWater: ignoringHighWater)
        } catch {
            close(reason: "HTTP/2: \(error)")
            return false
        }
    }

    /// Gives back grown buffers when no stream is open.
    func compactIfIdle() {
        guard life.isServing, streams.isEmpty else { return }
        client.compactIdleMemory()
    }
}
