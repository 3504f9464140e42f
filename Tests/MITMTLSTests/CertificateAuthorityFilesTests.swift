import Glibc
import Testing

@testable import MITMTLS

@Suite struct CertificateAuthorityFilesTests {
    @Test func tildeIsTheHomeDirectory() throws {
        let home = try #require(getenv("HOME").map { String(cString: $0) })
        #expect(CertificateAuthorityFiles(directory: "~").directory == home)
        #expect(CertificateAuthorityFiles(directory: "~/ca").directory == home + "/ca")
        #expect(CertificateAuthorityFiles(directory: "~/ca/").directory == home + "/ca")
        #expect(CertificateAuthorityFiles.defaultDirectory == home + "/.mitm-proxy")
    }

    @Test func tildeUserIsThatAccountsHome() {
        #expect(CertificateAuthorityFiles(directory: "~root/ca").directory == "/root/ca")
        #expect(
            CertificateAuthorityFiles(directory: "~no-such-account-here/ca").directory == "~no-such-account-here/ca")
    }

    @Test func otherPathsStayAsTheyAre() {
        #expect(CertificateAuthorityFiles(directory: "/tmp/ca/").directory == "/tmp/ca/")
        #expect(CertificateAuthorityFiles(directory: "ca").directory == "ca")
        #expect(CertificateAuthorityFiles(directory: "a/~b").directory == "a/~b")
    }
}
