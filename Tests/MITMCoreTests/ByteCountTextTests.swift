import Testing

@testable import MITMCore

@Suite struct ByteCountTextTests {
    @Test func smallCountsAreExactBytes() {
        #expect(ByteCountText.format(0) == "0 B")
        #expect(ByteCountText.format(999) == "999 B")
    }

    @Test func largerCountsUseOneDecimal() {
        #expect(ByteCountText.format(1234) == "1.2 kB")
        #expect(ByteCountText.format(10_485_760) == "10.5 MB")
        #expect(ByteCountText.format(999_999) == "1.0 MB")
    }
}
