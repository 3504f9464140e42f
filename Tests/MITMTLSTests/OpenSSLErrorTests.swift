import Testing

@testable import MITMTLS

@Suite struct OpenSSLErrorTests {
    @Test func reasonIsTheLastEntrysReasonField() {
        let stack = OpenSSLErrorStack(entries: ["error:0A000086:SSL routines::certificate verify failed"])
        #expect(stack.reason == "certificate verify failed")
        #expect(
            TLSError("connecting to a.test:443", stack: stack).description
                == "connecting to a.test:443: certificate verify failed")
    }
}
