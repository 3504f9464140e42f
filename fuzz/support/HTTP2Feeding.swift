import MITMHTTP2

/// Feeds a peer's raw frames to one HTTP/2 session in pieces, answering what it reports the way the proxy's relay
/// does (responses, body, resets), and drains its output after every piece. Any error thrown is a clean refusal;
/// only a crash, a leak or a hang is a finding.
enum HTTP2Feeding {
    static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func run(role: HTTP2Role, frames: [UInt8]) {
        guard let control = frames.first else { return }
        var settings = HTTP2Settings()
        settings.streamWindow = 1 + Int32(control & 0x3F) * 1024
        guard let session = try? HTTP2Session(role: role, settings: settings) else { return }
        var input = Array(frames.dropFirst())
        do throws(HTTP2SessionError) {
            if role == .server {
                input = clientPreface + input
            } else {
                _ = try session.submitRequest(
                    [HTTP2HeaderField(":method", "POST"), HTTP2HeaderField(":scheme", "https"),
                     HTTP2HeaderField(":authority", "fuzz.test"), HTTP2HeaderField(":path", "/")], endStream: false)
                session.send(Array(repeating: 0x61, count: 100), on: 1)
                session.finish(streamID: 1)
            }
            _ = try session.produceOutput()
            let pieceSize = 1 + Int(control >> 2)
            var start = 0
            while start < input.count {
                let end = min(input.count, start + pieceSize)
                try session.receive(Array(input[start..<end]))
                start = end
                answer(session.takeEvents(), on: session, role: role)
                _ = try session.produceOutput()
            }
            _ = try session.produceOutput()
        } catch {
            return
        }
    }

    private static func answer(_ events: [HTTP2Event], on session: HTTP2Session, role: HTTP2Role) {
        for event in events {
            switch event {
            case .headers(let streamID, _) where role == .server:
                if streamID % 3 == 0 {
                    session.reset(streamID: streamID, code: .cancel)
                } else if (try? session.submitResponse(streamID: streamID, [HTTP2HeaderField(":status", "200")], endStream: false)) != nil {
                    session.send(Array(repeating: 0x62, count: 300), on: streamID)
                    session.finish(streamID: streamID, trailers: [HTTP2HeaderField("x-trailer", "1")])
                }
            case .data(let streamID, let bytes):
                session.consume(streamID: streamID, count: bytes.count)
            default:
                break
            }
        }
    }
}
