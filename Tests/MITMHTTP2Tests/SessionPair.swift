import Testing

@testable import MITMHTTP2

/// A client session and a server session wired back to back in memory: `pump()` moves bytes both ways
/// until neither has anything to say, and keeps what each reported.
final class SessionPair {
    let client: HTTP2Session
    let server: HTTP2Session
    private(set) var clientEvents: [HTTP2Event] = []
    private(set) var serverEvents: [HTTP2Event] = []

    init(client: HTTP2Settings = HTTP2Settings(), server: HTTP2Settings = HTTP2Settings()) throws {
        self.client = try HTTP2Session(role: .client, settings: client)
        self.server = try HTTP2Session(role: .server, settings: server)
    }

    /// Exchanges bytes until both sides are quiet.
    func pump() throws {
        for _ in 0..<10_000 {
            let up = try client.produceOutput()
            if !up.isEmpty { try server.receive(up) }
            let down = try server.produceOutput()
            if !down.isEmpty { try client.receive(down) }
            clientEvents += client.takeEvents()
            serverEvents += server.takeEvents()
            if up.isEmpty && down.isEmpty { return }
        }
        Issue.record("the sessions never went quiet")
    }

    /// Forgets the events seen so far.
    func clearEvents() {
        clientEvents.removeAll()
        serverEvents.removeAll()
    }

    /// Body bytes received on `streamID` by the server.
    func serverBody(_ streamID: Int32) -> [UInt8] { Self.body(serverEvents, streamID) }

    /// Body bytes received on `streamID` by the client.
    func clientBody(_ streamID: Int32) -> [UInt8] { Self.body(clientEvents, streamID) }

    static func body(_ events: [HTTP2Event], _ streamID: Int32) -> [UInt8] {
        events.reduce(into: []) { bytes, event in
            if case .data(let id, let data) = event, id == streamID { bytes += data }
        }
    }

    static func blocks(_ events: [HTTP2Event], _ streamID: Int32) -> [HTTP2HeaderBlock] {
        events.compactMap { event in
            if case .headers(let id, let block) = event, id == streamID { return block }
            return nil
        }
    }
}

/// Header lists used by the tests.
enum Fields {
    static func get(_ path: String = "/", authority: String = "example.test") -> [HTTP2HeaderField] {
        [
            HTTP2HeaderField(":method", "GET"), HTTP2HeaderField(":scheme", "https"),
            HTTP2HeaderField(":authority", authority), HTTP2HeaderField(":path", path),
        ]
    }

    static func post(_ path: String = "/upload") -> [HTTP2HeaderField] {
        [
            HTTP2HeaderField(":method", "POST"), HTTP2HeaderField(":scheme", "https"),
            HTTP2HeaderField(":authority", "example.test"), HTTP2HeaderField(":path", path),
        ]
    }

    static func status(_ code: Int, _ extra: [HTTP2HeaderField] = []) -> [HTTP2HeaderField] {
        [HTTP2HeaderField(":status", String(code))] + extra
    }
}
