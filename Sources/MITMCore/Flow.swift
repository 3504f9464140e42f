import Foundation

/// One line of the web UI's flow list: an HTTP exchange, a TLS handshake that did not lead to one (refused,
/// failed, inconclusive), or a tunnel relayed untouched.
package struct Flow: Sendable, Equatable {
    /// What the flow is. On the heap, in a box of its own size: inline, a record made every flow in the list (and every
    /// copy of one) 456 bytes.
    package indirect enum Content: Sendable, Equatable {
        /// A request and its response (or its failure).
        case exchange(ExchangeRecord)
        /// A TLS connection the client refused, failed or left idle: what the client did with the certificate.
        case handshake(ConnectionVerdict)
        /// A CONNECT tunnel relayed as it is (not TLS, or passed through).
        case tunnel(Tunnel)
    }

    /// A CONNECT tunnel that was not intercepted.
    package struct Tunnel: Sendable, Equatable {
        package var connectionID: Int
        package var host: String
        package var port: Int
        package var bytesUp: Int
        package var bytesDown: Int
        /// Why it ended.
        package var reason: String
        /// Whether the host lists passed its TLS through untouched (otherwise it was not TLS).
        package var passedThrough: Bool
        /// When the proxy accepted it, and when it ended.
        package var started: Date
        package var ended: Date

        /// Creates a tunnel record.
        package init(
            connectionID: Int, host: String, port: Int, bytesUp: Int, bytesDown: Int, reason: String,
            passedThrough: Bool = false,
            started: Date, ended: Date
        ) {
            self.started = started
            self.passedThrough = passedThrough
            self.connectionID = connectionID
            self.host = host
            self.port = port
            self.bytesUp = bytesUp
            self.bytesDown = bytesDown
            self.reason = reason
            self.ended = ended
        }
    }

    /// The flow's number in the list: increasing, never reused within a run (also across a clear).
    package let id: Int
    /// What it is.
    package var content: Flow.Content
    /// The TLS facts of the intercepted connection that carried an exchange, when the proxy saw its handshake.
    package var tls: ConnectionVerdict? {
        get { sharedTLS?.value }
        set { sharedTLS = newValue.map(SharedValue.init) }
    }
    /// `tls`, held once for every flow of the connection and the log's index of interceptions.
    private(set) var sharedTLS: SharedValue<ConnectionVerdict>?
    /// Whether the bodies were let go to keep the flow list within its memory budget (newer flows keep theirs).
    package var bodiesReleased = false
    /// The WebSocket the exchange opened, with its messages so far.
    package var webSocket: FlowWebSocket? {
        get { sharedWebSocket?.value }
        set { sharedWebSocket = newValue.map(SharedValue.init) }
    }
    /// `webSocket` on the heap: few exchanges open one, and inline it took about 200 bytes of every flow in the list.
    private var sharedWebSocket: SharedValue<FlowWebSocket>?
    /// What the rules did to the exchange, in the order they acted.
    package var ruleFirings: [RuleFiring] = []

    /// The firing of a rule that answered the request itself: no origin sent the response (or the failure).
    package var localAnswer: RuleFiring? {
        ruleFirings.first { $0.answersInsteadOfOrigin }
    }

    /// A flow numbered `id`.
    package init(id: Int, content: Flow.Content, tls: ConnectionVerdict? = nil) {
        self.init(id: id, content: content, sharedTLS: tls.map(SharedValue.init))
    }

    /// A flow numbered `id` sharing the TLS facts `sharedTLS` with the other flows of its connection.
    init(id: Int, content: Flow.Content, sharedTLS: SharedValue<ConnectionVerdict>?) {
        self.id = id
        self.content = content
        self.sharedTLS = sharedTLS
    }

    /// The host the flow is about.
    package var host: String {
        switch content {
        case .exchange(let record): record.host
        case .handshake(let verdict): verdict.host
        case .tunnel(let tunnel): tunnel.host
        }
    }

    /// The client connection that carried it.
    package var connectionID: Int {
        switch content {
        case .exchange(let record): record.connectionID
        case .handshake(let verdict): verdict.connectionID
        case .tunnel(let tunnel): tunnel.connectionID
        }
    }

    /// Body bytes held in memory.
    package var bodyBytes: Int {
        guard case .exchange(let record) = content else { return 0 }
        return record.requestBody.bytes.count + record.responseBody.bytes.count + (webSocket?.keptBytes ?? 0)
    }

    /// Lets go of the bodies, keeping their sizes.
    mutating func releaseBodies() {
        guard case .exchange(var record) = content, bodyBytes > 0 else { return }
        record.requestBody = record.requestBody.limited(to: 0)
        record.responseBody = record.responseBody.limited(to: 0)
        content = .exchange(record)
        webSocket?.release()
        bodiesReleased = true
    }
}
