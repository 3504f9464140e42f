import Testing

@testable import MITMProxy

@Suite struct LibraryVersionsTests {
    @Test func summaryNamesBothLibraries() {
        let summary = LibraryVersions.summary
        #expect(summary.contains("OpenSSL 3"))
        #expect(summary.contains("nghttp2 1."))
    }
}
