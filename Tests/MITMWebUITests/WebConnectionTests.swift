import MITMCore
import MITMIO
import MITMRules
import Synchronization
import Testing

@testable import MITMWebUI

/// A web UI connection on a byte stream the test holds, with a stand-in engine: requests that are not the web UI's
/// reach the engine's own pages, the acting paths reach the engine, and the connection tells its owner when it moved,
/// lingers and closes. No socket: the stream is a list of what was written.
@Suite struct WebConnectionTests {
    /// A client's end that keeps what is written to it and takes everything at once.
    private final class WrittenStream: ByteStream, @unchecked Sendable {
        let loop: EventLoop
        weak var delegate: StreamSocketDelegate?
        var written: [UInt8] = []
        var endSent = false
        private(set) var isClosed = false
        private(set) var isReading = false
        var bufferedOutputBytes: Int { 0 }
        var peerDescription: String { "127.0.0.1:50123" }
        var peerHost: String? { "127.0.0.1" }

        init(loop: EventLoop) { self.loop = loop }

        func write(_ bytes: [UInt8]) { written += bytes }
        func shutdownWriteAfterFlush() { endSent = true }
        func resumeReading() { isReading = true }
        func pauseReading() { isReading = false }
        func close() { isClosed = true }
        func detach(_ delegate: AnyObject) { if self.delegate === delegate { self.delegate = nil } }

        /// What the connection wrote since the last call.
        func take() -> String {
            defer { written = [] }
            return String(decoding: written, as: UTF8.self)
        }
    }

    /// The proxy's side of the connection: what it heard.
    private final class HeardOwner: WebConnectionOwner {
        var heard: [String] = []
        func webActivity() { heard.append("activity") }
        func webLingering() { heard.append("lingering") }
        func webClosed(reason: String) { heard.append("closed: \(reason)") }
    }

    /// An engine with the proxy's own pages and one pause; it keeps what it is asked.
    private final class PagesEngine: WebUIEngine {
        let asked = Mutex<[String]>([])

        func send(
            _ head: HTTPRequestHead, body: [UInt8], replaying flow: Int?, for peer: String?,
            done: @escaping @Sendable (ReplayOutcome) -> Void
        ) {
            asked.withLock { $0.append("send \(head.target)") }
            done(.failed("the origin refused the connection"))
        }

        var pausedExchanges: [BreakpointPause] { [] }
        func onPausesChanged(_ listen: @escaping @Sendable ([BreakpointPause]) -> Void) {}

        func answerPause(_ id: Int, _ answer: BreakpointPause.Answer, from peer: String?) -> PauseRefusal? {
            asked.withLock { $0.append("answer \(id)") }
            return nil
        }

        var webBreakpoints: [TrafficRule] { [] }
        func setWebBreakpoints(_ rules: [TrafficRule]) {}

        func localPage(for request: HTTPRequestHead) -> WebResponse {
            asked.withLock { $0.append("page \(request.target)") }
            return .ok("application/x-pem-file", Array("-----BEGIN CERTIFICATE-----\n".utf8))
        }
    }

    private let loop = EventLoop(index: 0, label: "web-connection-test")
    private let engine = PagesEngine()
    private let web = WebUI(configuration: WebUIConfiguration(), isOwnAddress: { _ in false }, droppedEvents: { 0 })

    init() { web.link(to: engine) }

    /// Sends `text` from the client, then waits for the web queue's answers and their delivery on the loop.
    private func clientSends(_ text: String, on stream: WrittenStream) -> String {
        loop.sync { Array(text.utf8).withUnsafeBytes { stream.delegate?.socket(stream, didRead: $0) } }
        web.queue.sync {}
        return loop.sync { stream.take() }
    }

    @Test func theProxysOwnPagesAndTheActingPathsReachTheEngineAndTheOwnerHearsTheConnection() {
        let stream = WrittenStream(loop: loop)
        let owner = HeardOwner()
        let connection = loop.sync {
            let connection = WebConnection(
                web: web, client: stream, parser: HTTP1Parser(role: .request), onWebPort: false)
            connection.owner = owner
            connection.start(initialEvents: [])
            return connection
        }
        let page = clientSends("GET /ca.pem HTTP/1.1\r\nHost: 127.0.0.1:8888\r\n\r\n", on: stream)
        #expect(page.hasPrefix("HTTP/1.1 200 OK\r\n") && page.hasSuffix("-----BEGIN CERTIFICATE-----\n"), "\(page)")
        #expect(loop.sync { stream.isReading && !stream.endSent }, "kept alive for the next request")
        let answered = clientSends(
            "POST /api/paused/4/abort HTTP/1.1\r\nHost: 127.0.0.1:8888\r\nX-Mitm-Proxy-UI: 1\r\nContent-Length: 0\r\n\r\n",
            on: stream)
        #expect(answered.hasPrefix("HTTP/1.1 204 No Content\r\n"), "\(answered)")
        let order = #"{"method": "GET", "url": "http://api.test/"}"#
        let sent = clientSends(
            "POST /api/send HTTP/1.1\r\nHost: 127.0.0.1:8888\r\nX-Mitm-Proxy-UI: 1\r\nConnection: close\r\n"
                + "Content-Length: \(order.utf8.count)\r\n\r\n\(order)", on: stream)
        #expect(sent.hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"), "\(sent)")
        #expect(sent.hasSuffix(#"{"error":"the origin refused the connection"}"#), "\(sent)")
        #expect(engine.asked.withLock { $0 } == ["page /ca.pem", "answer 4", "send http://api.test/"])
        #expect(loop.sync { stream.endSent }, "the client asked to close: FIN after the answer")
        loop.sync { stream.delegate?.socketDidReadEOF(stream) }
        let heard = loop.sync { owner.heard }
        #expect(heard.last == "closed: client closed the connection")
        #expect(heard.contains("activity") && heard.contains("lingering"), "\(heard)")
        #expect(loop.sync { stream.isClosed && stream.delegate == nil })
        withExtendedLifetime(connection) {}
    }
}
