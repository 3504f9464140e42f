import MITMCore
import Testing

/// The wait before a `407` for wrong proxy credentials, driven by explicit times (no sockets, no clock).
@Suite struct CredentialBackoffTests {
    @Test func theFirstWrongTryIsAnsweredAtOnceAndEachFurtherOneWaitsTwiceAsLongUpToTheBound() {
        var backoff = CredentialBackoff()
        let waits = (0..<10).map { backoff.handle(.rejected(address: "10.0.0.9", at: Double($0))) }
        #expect(waits[0] == .answerNow)
        #expect(waits[1] == .answerAfter(seconds: 0.25))
        #expect(waits[2] == .answerAfter(seconds: 0.5))
        #expect(waits[3] == .answerAfter(seconds: 1))
        #expect(waits[9] == .answerAfter(seconds: CredentialBackoff.longestDelay))
    }

    @Test func theRightCredentialsAreAnsweredAtOnceAndClearTheCount() {
        var backoff = CredentialBackoff()
        for second in 0..<5 { _ = backoff.handle(.rejected(address: "10.0.0.9", at: Double(second))) }
        #expect(backoff.handle(.accepted(address: "10.0.0.9")) == .answerNow)
        #expect(backoff.handle(.rejected(address: "10.0.0.9", at: 6)) == .answerNow)
    }

    @Test func anotherAddressIsNotSlowedAndAQuietAddressStartsAgain() {
        var backoff = CredentialBackoff()
        for second in 0..<5 { _ = backoff.handle(.rejected(address: "10.0.0.9", at: Double(second))) }
        #expect(backoff.handle(.rejected(address: "10.0.0.10", at: 5)) == .answerNow)
        #expect(backoff.handle(.rejected(address: "10.0.0.9", at: 5 + CredentialBackoff.quietInterval)) == .answerNow)
    }

    @Test func theAddressesRememberedAreBoundedAndTheQuietestIsForgotten() {
        var backoff = CredentialBackoff()
        for index in 0..<(CredentialBackoff.addressLimit + 10) {
            _ = backoff.handle(.rejected(address: "a\(index)", at: Double(index)))
        }
        #expect(backoff.rememberedCount == CredentialBackoff.addressLimit)
        let last = "a\(CredentialBackoff.addressLimit + 9)"
        #expect(
            backoff.handle(.rejected(address: last, at: Double(CredentialBackoff.addressLimit + 10)))
                == .answerAfter(seconds: 0.25))
    }
}
