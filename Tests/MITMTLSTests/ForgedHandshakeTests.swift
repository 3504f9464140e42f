import Foundation
import TestSupport
import Testing

@testable import MITMTLS

@Suite struct ForgedHandshakeTests {
    static let fixture = Result { try ForgerFixture() }

    struct ForgerFixture {
        let directory = TemporaryDirectory.path("forge")
        let authority: CertificateAuthority
        let forger: LeafForger
        let server: ServerTLSContext
        init() throws {
            authority = try CertificateAuthority.loadOrCreate(directory: directory)
            forger = try LeafForger(authority: authority)
            server = try ServerTLSContext()
        }
    }

    @Test func aClientTrustingTheCAAcceptsTheForgedLeaf() throws {
        let fixture = try Self.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("api.example.test")])
        let server = try TLSConnection(
            server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: ["http/1.1"],
            host: "api.example.test")
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        let client = try TLSConnection(
            client: trusting, serverName: "api.example.test", verifyName: "api.example.test", alpn: ["h2", "http/1.1"])
        let result = interactInMemory(client: client, server: server)
        #expect(result.client == .complete)
        #expect(result.server == .complete)
        #expect(client.negotiatedALPN == "http/1.1")
        #expect(client.peerCertificates.first?.spkiSHA256Base64 == fixture.forger.leafPin)
        #expect(server.certificateSent)
        #expect(client.protocolVersion == "TLSv1.3")
    }

    @Test func aClientWithoutTheCASendsUnknownCA() throws {
        let fixture = try Self.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("api.example.test")])
        let server = try TLSConnection(
            server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: ["http/1.1"],
            host: "api.example.test")
        let emptyStore = try ClientTLSContext(verify: true, extraCAFiles: [])
        let client = try TLSConnection(
            client: emptyStore, serverName: "api.example.test", verifyName: "api.example.test", alpn: [])
        let result = interactInMemory(client: client, server: server)
        guard case .failed(let clientFailure) = result.client else {
            Issue.record("client accepted an untrusted certificate")
            return
        }
        #expect(clientFailure.verifyError != nil)
        #expect(server.receivedAlert?.rejectsCertificate == true)
    }

    @Test func aWrongNameFailsVerification() throws {
        let fixture = try Self.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("other.example.test")])
        let server = try TLSConnection(
            server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: [], host: "other.example.test"
        )
        let trusting = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        let client = try TLSConnection(
            client: trusting, serverName: "api.example.test", verifyName: "api.example.test", alpn: [])
        let result = interactInMemory(client: client, server: server)
        guard case .failed(let failure) = result.client else {
            Issue.record("client accepted a certificate for another name")
            return
        }
        #expect(failure.verifyError?.contains("hostname mismatch") == true)
    }

    @Test func leavesAreForgedOncePerNameSetAndRenewedBeforeExpiry() throws {
        let fixture = try Self.fixture.get()
        let clock = TestClock()
        let forger = try LeafForger(authority: fixture.authority, leafKey: fixture.forger.leafKey, now: { clock.now })
        let first = try forger.leaf(for: [.dns("a.test"), .dns("b.test")])
        let again = try forger.leaf(for: [.dns("b.test"), .dns("a.test")])
        #expect(first.isSame(as: again))
        #expect(forger.forgedCount == 1)
        clock.advance(by: forger.validity)
        let renewed = try forger.leaf(for: [.dns("a.test"), .dns("b.test")])
        #expect(!renewed.isSame(as: first))
        #expect(forger.forgedCount == 2)
    }

    /// A host's first connection gets its leaf without waiting for it to be parsed back (1.56 M instructions in
    /// OpenSSL 3.0); the connections after it get the parsed one, whose encoding OpenSSL keeps. One leaf either way.
    @Test func aNewLeafIsHandedOutAsBuiltAndParsedBackForTheNextConnections() throws {
        let fixture = try Self.fixture.get()
        let forger = try LeafForger(authority: fixture.authority, leafKey: fixture.forger.leafKey)
        let first = try forger.leaf(for: [.dns("parsed-back.test")])
        #expect(!first.keepsEncoding)
        forger.waitForEncodings()
        let next = try forger.leaf(for: [.dns("parsed-back.test")])
        #expect(next.keepsEncoding)
        #expect(next.der == first.der)
        #expect(forger.forgedCount == 1)
    }

    @Test func forgedLeafFollowsTheRecipe() throws {
        let fixture = try Self.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("recipe.test"), .ipAddress([127, 0, 0, 1])])
        #expect(leaf.commonName == "recipe.test")
        #expect(leaf.subjectAlternativeNames == [.dns("recipe.test"), .ipAddress([127, 0, 0, 1])])
        #expect(!leaf.isCA)
        #expect(leaf.issuer == fixture.authority.certificate.subject)
        #expect(leaf.notAfter.timeIntervalSince(leaf.notBefore) < 47 * 86_400)
        #expect(leaf.spkiSHA256Base64 != fixture.authority.certificate.spkiSHA256Base64)
        let other = try fixture.forger.leaf(for: [.dns("other-recipe.test")])
        #expect(leaf.serialHex != other.serialHex)
    }

    @Test func aLongNameGetsAnEmptySubjectAndCriticalSAN() throws {
        let fixture = try Self.fixture.get()
        let long = String(repeating: "a", count: 60) + ".example.test"
        let leaf = try fixture.forger.leaf(for: [.dns(long)])
        #expect(leaf.commonName == nil)
        #expect(leaf.subjectAlternativeNames == [.dns(long)])
    }
}

/// A settable clock for expiry tests.
final class TestClock: @unchecked Sendable {
    // @unchecked Sendable: tests touch it from one task at a time.
    private(set) var now = Date()
    func advance(by interval: TimeInterval) { now = now.addingTimeInterval(interval) }
}

@Suite struct SessionResumptionTests {
    @Test func aSecondConnectionToTheSameUpstreamResumesTheSession() throws {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let leaf = try fixture.forger.leaf(for: [.dns("resume.test")])
        let client = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        var resumed: [Bool] = []
        for _ in 0..<2 {
            let server = try TLSConnection(
                server: fixture.server, certificate: leaf, key: fixture.forger.leafKey, alpn: [], host: "resume.test")
            let connection = try TLSConnection(
                client: client, serverName: "resume.test", verifyName: "resume.test", port: 443, alpn: [])
            handshakeAndTakeTickets(connection, server)
            resumed.append(connection.isResumed)
        }
        #expect(resumed == [false, true])
    }

    /// Runs the handshake in memory, then has the client read what the server wrote after it: TLS 1.3 tickets arrive
    /// after the handshake, and reading processes them.
    private func handshakeAndTakeTickets(_ client: TLSConnection, _ server: TLSConnection) {
        let result = interactInMemory(client: client, server: server)
        #expect(result.client == .complete && result.server == .complete)
        client.receive(server.takeOutput())
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 1)
        defer { scratch.deallocate() }
        _ = client.read(into: scratch)
    }

    /// A host's first connection presents its leaf as built, from the base context. The next presents the leaf parsed
    /// back, still from the base context, and has the host's own context made off the loops; later connections start
    /// from that one. All resume the sessions the first issued (shared ticket keys, the same certificate's bytes).
    @Test func aSessionFromTheBaseContextResumesOnTheIdentitysOwnContext() throws {
        let fixture = try ForgedHandshakeTests.fixture.get()
        let server = try ServerTLSContext()
        let built = try fixture.forger.leaf(for: [.dns("prepared.test")])
        fixture.forger.waitForEncodings()
        let parsed = try fixture.forger.leaf(for: [.dns("prepared.test")])
        let identity = ServerIdentityContext.Identity(certificate: parsed, key: fixture.forger.leafKey, chain: [])
        let client = try ClientTLSContext(verify: true, extraCAFiles: [fixture.authority.files.certificatePEM])
        var seen: [String] = []
        for attempt in 0..<3 {
            if attempt == 2 { server.waitForPreparations() }
            let leaf = attempt == 0 ? built : parsed
            let serving = try TLSConnection(
                server: server, certificate: leaf, key: fixture.forger.leafKey, alpn: [], host: "prepared.test")
            let connection = try TLSConnection(
                client: client, serverName: "prepared.test", verifyName: "prepared.test", port: 443, alpn: [])
            handshakeAndTakeTickets(connection, serving)
            let onBase = serving.contextPointer == server.base.pointer
            seen.append("\(onBase ? "base" : "own") \(connection.isResumed ? "resumed" : "full")")
        }
        #expect(seen == ["base full", "base resumed", "own resumed"])
        #expect(server.preparedContext(presenting: identity) != nil)
    }
}
