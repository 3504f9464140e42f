import Testing

@testable import MITMPins

@Suite struct PinPrefixTests {
    /// A pin whose base64 starts with `/` written with OkHttp's `sha256/` prefix reads like curl's `sha256//`.
    @Test func aPinStartingWithASlashKeepsItsSlash() {
        let pin = "/nO1kKpEMQGOIxQjAKhYO/hnnApFgEAIbWK6tS5HeVU="
        #expect(PinValue.strippingPrefix("sha256/" + pin) == pin)
        #expect(PinValue.strippingPrefix("sha256//" + pin) == pin)
    }

    @Test func curlAndOkHttpPrefixesAreBothRemoved() {
        let pin = "nO1kKpEMQGOIxQjAKhYO/hnnApFgEAIbWK6tS5HeVU0="
        #expect(PinValue.strippingPrefix("sha256//" + pin) == pin)
        #expect(PinValue.strippingPrefix("sha256/" + pin) == pin)
        #expect(PinValue.strippingPrefix(pin) == nil)
    }
}
