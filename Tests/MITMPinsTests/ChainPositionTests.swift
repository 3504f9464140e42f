import Foundation
import MITMTLS
import Testing

@testable import MITMPins

@Suite(.tags(.live), .skippedInFastTier) struct ChainPositionTests {
    @Test func filesAreJudgedCertificateByCertificate() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let root = try #require(try CertificateFile.read(pki.path("root.pem")).first)
        let intermediate = try #require(try CertificateFile.read(pki.path("intermediate.pem")).first)
        let leaf = try #require(try CertificateFile.read(pki.path("leaf.pem")).first)
        #expect(ChainPosition.of(root, index: 0, served: false) == .root)
        #expect(ChainPosition.of(intermediate, index: 0, served: false) == .intermediate)
        #expect(ChainPosition.of(leaf, index: 0, served: false) == .leaf)
    }

    @Test func aServedChainStartsWithItsLeaf() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let root = try #require(try CertificateFile.read(pki.path("root.pem")).first)
        #expect(ChainPosition.of(root, index: 0, served: true) == .leaf)
        #expect(ChainPosition.of(root, index: 1, served: true) == .root)
    }

    @Test func joinedChainsAreRenumbered() async throws {
        let pki = try await TestPKI.withPinLeaves()
        let served = try CertificateChain(
            source: "server", certificates: CertificateFile.read(pki.path("leaf-chain.pem")), served: true, now: Date())
        let root = try CertificateChain(
            source: "root.pem", certificates: CertificateFile.read(pki.path("root.pem")), served: false, now: Date())
        let joined = CertificateChain(joining: [served, root])
        #expect(joined.elements.map(\.index) == [0, 1, 2])
        #expect(joined.elements.map(\.position) == [.leaf, .intermediate, .root])
        #expect(joined.source == "server + root.pem")
    }
}
