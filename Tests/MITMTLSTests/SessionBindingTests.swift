import COpenSSL
import Testing

@testable import MITMTLS

/// A session the proxy issued to a client of one host resumes only for that host and the certificate it was shown
/// (RFC 6066 §3, RFC 8446 §4.6.1): offered to another host, an IP literal without SNI, or under another certificate, it
/// gets a full handshake, so the client sees (and judges) the certificate of the connection it is on.
@Suite struct SessionBindingTests {
    enum Resumption: String, CaseIterable, CustomTestStringConvertible {
        case tls13Ticket = "TLS 1.3 ticket"
        case tls12Ticket = "TLS 1.2 ticket"
        case tls12SessionID = "TLS 1.2 session ID"
        var testDescription: String { rawValue }
    }

    @Test(arguments: Resumption.allCases) func aSessionResumesOnlyForItsHostAndCertificate(_ resumption: Resumption)
        throws
    {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let server = try ServerTLSContext()
        let client = try Self.clientContext(resumption)
        let leafA = try fixture.forger.leaf(for: [.dns("a.test")])
        let leafB = try fixture.forger.leaf(for: [.dns("b.test")])
        let leafIP = try fixture.forger.leaf(for: [.ipAddress([127, 0, 0, 1])])
        let otherLeafA = try fixture.forger.leaf(for: [.dns("a.test"), .dns("a2.test")])

        // Each host's first connection starts on the base context, whose session cache they all share.
        let first = try handshake(client, "a.test", server, leafA, host: "a.test")
        #expect(!first.isResumed)
        let key = try #require(first.sessionKey)
        let session = try #require(client.sessions.session(for: key))

        let other = try handshake(client, "b.test", server, leafB, host: "b.test", offering: session)
        #expect(!other.isResumed, "a session of a.test resumed on b.test")
        #expect(other.peerCertificates.first?.isSame(as: leafB) == true)

        let literal = try handshake(
            client, nil, server, leafIP, host: "127.0.0.1", verifyName: "127.0.0.1", offering: session)
        #expect(!literal.isResumed, "a session of a.test resumed on a CONNECT to 127.0.0.1 without SNI")
        #expect(literal.peerCertificates.first?.isSame(as: leafIP) == true)

        let reforged = try handshake(client, "a.test", server, otherLeafA, host: "a.test", offering: session)
        #expect(!reforged.isResumed, "a session resumed under another certificate")
        #expect(reforged.peerCertificates.first?.isSame(as: otherLeafA) == true)

        // Resumption itself still works for the same host and certificate (now on a.test's own context).
        server.waitForPreparations()
        _ = try handshake(client, "a.test", server, leafA, host: "a.test")
        let again = try handshake(client, "a.test", server, leafA, host: "a.test")
        #expect(again.isResumed, "a.test's own session did not resume")
    }

    private static func clientContext(_ resumption: Resumption) throws -> ClientTLSContext {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let context = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        if resumption != .tls13Ticket {
            _ = SSL_CTX_ctrl(context.pointer, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        }
        // SSL_OP_NO_TICKET, a macro Swift cannot import.
        if resumption == .tls12SessionID { _ = SSL_CTX_set_options(context.pointer, UInt64(1) << 14) }
        return context
    }

    /// A client connection to `serverName` (offering `session` when given) handshaken with a server presenting `leaf`
    /// for `host`; the client has read what came after the handshake (TLS 1.3 tickets).
    private func handshake(
        _ client: ClientTLSContext, _ serverName: String?, _ server: ServerTLSContext, _ leaf: X509Certificate,
        host: String, verifyName: String? = nil, offering session: TLSSessionBox? = nil
    ) throws -> TLSConnection {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let name = verifyName ?? serverName ?? host
        if let session {
            let probe = try TLSConnection(client: client, serverName: serverName, verifyName: name, port: 443, alpn: [])
            let key = try #require(probe.sessionKey)
            client.sessions.store(session, for: key)
        }
        let connection = try TLSConnection(
            client: client, serverName: serverName, verifyName: name, port: 443, alpn: [])
        let serving = try TLSConnection(
            server: server, certificate: leaf, key: fixture.forger.leafKey, alpn: [], host: host)
        let result = interactInMemory(client: connection, server: serving)
        #expect(result.client == .complete && result.server == .complete, "\(result)")
        connection.receive(serving.takeOutput())
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 1)
        defer { scratch.deallocate() }
        _ = connection.read(into: scratch)
        return connection
    }
}
