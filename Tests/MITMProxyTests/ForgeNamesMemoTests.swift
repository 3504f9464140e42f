import MITMCore
import MITMTLS
import Testing

@testable import MITMProxy

/// A forged leaf carries the host the client asked for plus its upstream certificate's names, also when the
/// names come from the memo a pooled upstream's clients share.
@Suite struct ForgeNamesMemoTests {
    private static func upstreamCertificates() throws -> [X509Certificate] {
        let authority = try CertificateAuthority.loadOrCreate(directory: TemporaryDirectory.path("memo-ca"))
        let forger = try LeafForger(authority: authority)
        return try (0..<(ForgeNamesMemo.capacity + 8)).map { index in
            try forger.leaf(for: [.dns("origin\(index).test"), .dns("*.cdn\(index).test"), .dns("bad name \(index)")])
        }
    }

    @Test func eachCertificateAndHostGetsItsOwnNames() throws {
        let certificates = try Self.upstreamCertificates()
        var memo = ForgeNamesMemo()
        for round in 0..<2 {
            for (index, certificate) in certificates.enumerated() {
                let names = memo.names(primary: "origin\(index).test", upstream: certificate)
                #expect(
                    names == ForgeNames.names(primary: "origin\(index).test", upstream: certificate), "round \(round)")
                #expect(names == [.dns("origin\(index).test"), .dns("*.cdn\(index).test")], "round \(round)")
            }
        }
        // The same certificate reached under another name forges for that name.
        #expect(
            memo.names(primary: "other.test", upstream: certificates[0])
                == [.dns("other.test"), .dns("origin0.test"), .dns("*.cdn0.test")])
        #expect(memo.names(primary: "10.0.0.1", upstream: nil) == [.ipAddress(IPAddressText.parse("10.0.0.1")!)])
    }
}
