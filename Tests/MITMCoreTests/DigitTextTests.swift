import MITMCore
import Testing

@Suite struct DigitTextTests {
    @Test func hexIsTwoDigitsPerByte() {
        #expect(DigitText.hex([0x00, 0x0f, 0xab, 0xff]) == "000fabff")
        #expect(DigitText.hex([0x00, 0x0f, 0xab, 0xff], uppercase: true) == "000FABFF")
        #expect(DigitText.hex([UInt8]()) == "")
        #expect(
            DigitText.hex((0...255).map(UInt8.init))
                == (0...255).map { byte in
                    let digits = String(byte, radix: 16)
                    return digits.count == 1 ? "0" + digits : digits
                }.joined())
    }

    @Test func paddedIsZeroFilledOnTheLeft() {
        #expect(DigitText.padded(7, width: 3) == "007")
        #expect(DigitText.padded(42, width: 2) == "42")
        #expect(DigitText.padded(1234, width: 2) == "1234", "never cut")
        #expect(DigitText.padded(0, width: 2) == "00")
        #expect(DigitText.padded(Int32(2026), width: 4) == "2026")
        #expect(DigitText.padded(-5, width: 3) == "-005")
    }
}
