import Testing

@testable import MITMCore

@Suite struct UTF8ValidatorTests {
    private func check(_ bytes: [UInt8], splitAt split: Int? = nil) -> Bool {
        var validator = UTF8Validator()
        if let split {
            validator.feed(Array(bytes[..<split]))
            validator.feed(Array(bytes[split...]))
        } else {
            validator.feed(bytes)
        }
        return validator.isComplete
    }

    @Test func acceptsEveryLengthOfSequenceEvenSplitInside() {
        let text = Array("a é € 😀 z".utf8)
        #expect(check(text))
        for split in 0...text.count { #expect(check(text, splitAt: split), "split at \(split)") }
    }

    @Test(arguments: [
        [0xC0, 0xAF] as [UInt8],  // overlong "/"
        [0xE0, 0x80, 0xAF],  // overlong three-byte form
        [0xED, 0xA0, 0x80],  // a UTF-16 surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xFF],  // never a lead byte
        [0x80],  // a continuation byte on its own
        [0xE2, 0x82],  // ends inside a sequence
        [0xCE, 0x41],  // a lead byte followed by ASCII
    ])
    func refusesWhatRFC3629Forbids(bytes: [UInt8]) {
        #expect(!check(bytes))
    }
}
