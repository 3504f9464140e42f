import MITMCore
import MITMHTTP2

/// A replay's one request over HTTP/2, when the proxy chose `h2` for the replay's connection (the origin speaks only
/// HTTP/2): bytes in, bytes out, and the response's status once its stream ends.
final class ReplayHTTP2Exchange {
    private let session: HTTP2Session
    private var streamID: Int32 = 0
    private var status: Int?

    /// What the exchange says after bytes came in.
    enum Progress {
        /// Not done; write `output`.
        case going(output: [UInt8])
        /// The stream ended with the final response `status` (nil: none came); why, when it failed.
        case ended(status: Int?, failure: String?)
    }

    init() throws(HTTP2SessionError) {
        session = try HTTP2Session(role: .client)
    }

    /// Opens the stream for `head` (its target the absolute `url`) with `body`; the bytes to write.
    func start(_ head: HTTPRequestHead, url: AbsoluteURL, body: [UInt8]) throws(HTTP2SessionError) -> [UInt8] {
        var fields = [
            HTTP2HeaderField(":method", head.method), HTTP2HeaderField(":scheme", url.scheme),
            HTTP2HeaderField(":authority", url.authority), HTTP2HeaderField(":path", url.pathAndQuery),
        ]
        for field in head.headers
        where ![
            "host", "connection", "content-length", "transfer-encoding", "keep-alive",
            "proxy-connection", "upgrade", "te",
        ].contains(field.name.lowercased()) {
            fields.append(HTTP2HeaderField(field.name.lowercased(), field.value))
        }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(head.method) {
            fields.append(HTTP2HeaderField("content-length", String(body.count)))
        }
        streamID = try session.submitRequest(fields, endStream: body.isEmpty)
        if !body.isEmpty {
            session.send(body, on: streamID)
            session.finish(streamID: streamID)
        }
        return try session.produceOutput()
    }

    /// Takes `bytes` from the proxy.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Progress {
        do {
            try session.receive(bytes)
            for event in session.takeEvents() {
                switch event {
                case .headers(let id, let block) where id == streamID && block.kind == .response:
                    status = block.fields.first { $0.nameText == ":status" }.flatMap { Int($0.valueText) }
                    if block.endStream { return .ended(status: status, failure: nil) }
                case .data(let id, let piece) where id == streamID:
                    session.consume(streamID: id, count: piece.count)
                case .endStream(let id) where id == streamID:
                    return .ended(status: status, failure: nil)
                case .resetReceived(let id, let code) where id == streamID:
                    return .ended(status: status, failure: "the proxy reset the HTTP/2 stream (\(code))")
                case .goAwayReceived(let last, let code, _) where last < streamID:
                    return .ended(
                        status: status, failure: "the proxy ended the HTTP/2 connection before the request (\(code))")
                default:
                    continue
                }
            }
            return .going(output: try session.produceOutput())
        } catch {
            return .ended(status: status, failure: "HTTP/2 with the proxy failed: \(error)")
        }
    }
}
