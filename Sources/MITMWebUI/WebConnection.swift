import Foundation
import MITMCore
import MITMIO

/// What a web UI connection tells the connection that owns it (the proxy's, which keeps its deadline), on its loop.
/// Held `unowned`: the owner outlives it.
package protocol WebConnectionOwner: AnyObject {
    /// A request or response moved: the owner's idle deadline starts again.
    func webActivity()
    /// The last response is queued and only the client's hang-up is awaited.
    func webLingering()
    /// The connection closed.
    func webClosed(reason: String)
}

/// Serves the web UI on one client connection, HTTP/1.1 with keep-alive: reads a request, has the web queue compute
/// the answer (never the loop), writes it as the client drains it, and for `/events` keeps the connection as the
/// page's live feed. Requests that are not the web UI's get the proxy's own pages (the CA download). Confined to its
/// loop; the client is the plain byte stream the proxy accepted, and this connection is its delegate.
// @unchecked Sendable: confined to its loop's queue; work from the web queue and the feed comes back through `loop.execute`.
package final class WebConnection: StreamSocketDelegate, @unchecked Sendable {
    /// Where the connection is.
    package enum State {
        /// Waiting for a whole request.
        case reading
        /// The web queue computes the answer to the request read.
        case answering
        /// Writing a response body as the client takes it.
        case sending(body: [UInt8], offset: Int, keepAlive: Bool)
        /// The page's live feed: messages are written as the feed has them and the client takes them.
        case streaming(WebFeed)
        /// The last response is queued; waiting for the client to hang up.
        case closing
        case closed
    }

    let web: WebUI
    let loop: EventLoop
    let client: any ByteStream
    package private(set) var state = State.reading
    private var parser: HTTP1Parser
    private var queued: [HTTP1Event] = []
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var clientEnded = false
    /// The connection that owns this one.
    package unowned var owner: (any WebConnectionOwner)?
    private let peer: String?
    /// Whether this connection came to the web UI's own port (`--web-port`), not the proxy's.
    private let onWebPort: Bool

    /// Bytes written at once; the rest follows as the client drains.
    static let writeChunk = 256 * 1024
    /// The kernel's send buffer of a live feed, and the most it queues beyond that before its feed holds messages.
    static let kernelSendBuffer = 64 * 1024
    /// A request body (the flow numbers of a HAR download) may not be larger.
    static let maxRequestBody = 4 * 1024 * 1024

    /// Serves `client`, on its loop, where `parser` has read so far.
    package init(web: WebUI, client: any ByteStream, parser: HTTP1Parser, onWebPort: Bool) {
        self.onWebPort = onWebPort
        self.web = web
        self.loop = client.loop
        self.client = client
        self.parser = parser
        peer = PeerAddress.host(of: client.peerDescription)
    }

    deinit { client.detach(self) }

    /// Starts serving, first the events the caller already parsed.
    package func start(initialEvents: [HTTP1Event]) {
        client.delegate = self
        queued = initialEvents
        processQueued()
        if case .reading = state { client.resumeReading() }
    }

    // MARK: client

    package func socket(_ socket: any ByteStream, didRead bytes: UnsafeRawBufferPointer) {
        // Bytes alone do not keep the connection: a request head trickled in byte by byte must still end at the
        // idle timeout. Whole requests and responses do (`answer`, `finishSending`).
        switch state {
        case .streaming, .closing, .closed: return  // a page sends nothing on its feed
        case .reading, .answering, .sending: break
        }
        do {
            queued += try parser.feed(Array(bytes))
        } catch {
            answerAndClose(.text(error.suggestedStatus, error.reason))
            return
        }
        processQueued()
    }

    package func socketDidReadEOF(_ socket: any ByteStream) {
        clientEnded = true
        switch state {
        case .reading where head == nil && queued.isEmpty, .streaming, .closing:
            close(reason: "client closed the connection")
        case .reading, .answering, .sending: return  // the answer goes out, then the connection closes
        case .closed: return
        }
    }

    package func socket(_ socket: any ByteStream, didFail error: SystemCallError) {
        close(reason: "client: \(error.description)")
    }

    package func socketDidDrain(_ socket: any ByteStream) {
        switch state {
        case .sending: continueSending()
        case .streaming(let feed): if feed.drained() { writeFeed(feed) }
        case .reading, .answering, .closing, .closed: return
        }
    }

    /// Handles parsed events while a request can be taken; stops reading while one is answered.
    private func processQueued() {
        while case .reading = state, !queued.isEmpty {
            let event = queued.removeFirst()
            switch event {
            case .requestHead(let requestHead, _):
                head = requestHead
                body = []
            case .responseHead:
                continue
            case .body(let bytes):
                guard body.count + bytes.count <= Self.maxRequestBody else {
                    answerAndClose(
                        .text(413, "a request body to the web UI may hold at most \(Self.maxRequestBody) bytes"))
                    return
                }
                body += bytes
            case .end:
                guard let requestHead = head else { continue }
                head = nil
                answer(requestHead, body: body)
            }
        }
        if clientEnded, case .reading = state, head == nil, queued.isEmpty {
            close(reason: "client closed the connection")
        }
    }

    private func answer(_ requestHead: HTTPRequestHead, body: [UInt8]) {
        state = .answering
        owner?.webActivity()
        client.pauseReading()
        let keepAlive =
            requestHead.keepAlive && requestHead.method != "CONNECT" && !requestHead.headers.contains("upgrade")
        guard requestHead.method != "CONNECT" else {
            answerAndClose(.text(405, "this port serves the web UI; use the proxy's own port for CONNECT"))
            return
        }
        let request = WebRequest(head: requestHead, body: body, peer: peer, onWebPort: onWebPort)
        let web = web
        web.queue.async { [self] in
            var reply = web.reply(to: request)
            if case .later(let start) = reply {
                start { response in
                    self.loop.execute { self.deliver(.response(response), to: requestHead, keepAlive: keepAlive) }
                }
                return
            }
            if case .notMine = reply {
                reply = .response(
                    web.engine?.localPage(for: requestHead) ?? .text(503, "the proxy is not running"))
            }
            let answered = reply
            loop.execute { self.deliver(answered, to: requestHead, keepAlive: keepAlive) }
        }
    }

    private func deliver(_ reply: WebReply, to requestHead: HTTPRequestHead, keepAlive: Bool) {
        guard case .answering = state else { return }
        switch reply {
        case .response(let response):
            // A refused client gets its answer and the connection ends.
            let keep = keepAlive && !clientEnded && response.status != 403
            client.write(response.head(keepAlive: keep).serialized())
            state = .sending(body: requestHead.method == "HEAD" ? [] : response.body, offset: 0, keepAlive: keep)
            continueSending()
        case .eventStream(let initial):
            let feed = WebFeed(capacity: web.configuration.feedCapacity, loop: loop) { [weak self] in self?.feedReady()
            }
            state = .streaming(feed)
            // What a page that stops reading can hold: this, the connection's own mark, and the feed's capacity.
            (client as? StreamSocket)?.limitKernelSendBuffer(to: Self.kernelSendBuffer)
            web.attach(feed)
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/event-stream; charset=utf-8")
            WebResponse.addCommonHeaders(to: &headers)
            client.write(HTTPResponseHead(status: 200, reason: "OK", headers: headers).serialized() + initial)
            // Read on, to see the page go away.
            client.resumeReading()
        case .notMine:
            answerAndClose(.text(404, "no page \(requestHead.target)"))
        case .later:
            answerAndClose(.text(500, "an answer came back unfinished"))  // `answer` starts these: never delivered
        }
    }

    private func continueSending() {
        while case .sending(let bytes, let offset, let keepAlive) = state {
            guard offset < bytes.count else {
                finishSending(keepAlive: keepAlive)
                return
            }
            guard client.bufferedOutputBytes < Self.writeChunk else { return }  // the next drain continues
            let end = min(bytes.count, offset + Self.writeChunk)
            // The state moves on before the write: a write the kernel takes at once may report the drain right away.
            state = .sending(body: bytes, offset: end, keepAlive: keepAlive)
            owner?.webActivity()
            client.write(Array(bytes[offset..<end]))
        }
    }

    private func finishSending(keepAlive: Bool) {
        guard keepAlive else {
            closeAfterFlush()
            return
        }
        state = .reading
        owner?.webActivity()
        client.resumeReading()
        processQueued()
    }

    // MARK: the live feed

    private func feedReady() {
        guard case .streaming(let feed) = state else { return }
        writeFeed(feed)
    }

    private func writeFeed(_ feed: WebFeed) {
        guard client.bufferedOutputBytes < Self.kernelSendBuffer else {
            feed.blocked()
            return
        }
        let bytes = feed.take()
        if !bytes.isEmpty { client.write(bytes) }
    }

    /// The idle deadline passed: a live feed says it is still there (and finds out whether the page is); returns
    /// whether the connection stays.
    package func idleDeadlinePassed() -> Bool {
        guard case .streaming = state else { return false }
        client.write(ServerSentEvent.heartbeat)
        owner?.webActivity()
        return true
    }

    // MARK: closing

    private func answerAndClose(_ response: WebResponse) {
        client.write(response.head(keepAlive: false).serialized() + response.body)
        closeAfterFlush()
    }

    /// Sends what is queued, then FIN, and waits for the client to hang up.
    private func closeAfterFlush() {
        state = .closing
        client.shutdownWriteAfterFlush()
        client.resumeReading()
        owner?.webLingering()
    }

    /// Closes the connection now.
    package func close(reason: String) {
        if case .closed = state { return }
        if case .streaming(let feed) = state { web.detach(feed) }
        state = .closed
        client.detach(self)
        client.close()
        let owner = owner
        self.owner = nil
        owner?.webClosed(reason: reason)
    }
}
