/// Hex and zero-padded decimal text without Foundation's `String(format:)`, which goes through CoreFoundation's
/// format parser for every call (1.3 M instructions for the 32 bytes of one digest at start-up) and keeps
/// CoreFoundation's string code resident.
package enum DigitText {
    /// Two hex digits per byte: `hex([0xab, 0x01]) == "ab01"`.
    package static func hex(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `value` in decimal, zero-padded on the left to `width` digits: `padded(7, width: 3) == "007"`.
    package static func padded(_ value: some BinaryInteger, width: Int) -> String {
        let digits = String(value.magnitude)
        let sign = value < 0 ? "-" : ""
        return sign + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
