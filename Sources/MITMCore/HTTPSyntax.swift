/// Byte classes and small text helpers shared by the HTTP/1 parser, the header helpers and the target parser (RFC 9110 §5.6).
package enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// `tchar`: the characters allowed in methods, field names and transfer codings: ALPHA, DIGIT and
    /// ``!#$%&'*+-.^_`|~``, as two bit sets over the ASCII bytes (every field name of every message is checked).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        let (lowTokens, highTokens): (UInt64, UInt64) = (0x03FF_6CFA_0000_0000, 0x57FF_FFFF_C7FF_FFFE)
        switch byte {
        case 0..<64: return lowTokens >> byte & 1 == 1
        case 64..<128: return highTokens >> (byte - 64) & 1 == 1
        default: return false
        }
    }

    /// Whether `bytes` is a non-empty token.
    package static func isToken<C: Collection<UInt8>>(_ bytes: C) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenByte)
    }

    /// Field values and reason phrases: HTAB, SP, visible ASCII and obs-text; no other control characters, no DEL.
    static func isTextByte(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// Whether every byte is printable ASCII (space to `~`), the usual field value: eight bytes at a time. A false
    /// answer only means the bytes need a closer look (a tab, obs-text, a control character).
    static func isPrintableASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0
        // A byte below 0x20 borrows in the subtraction, one of 0x7F and above sets its top bit in the sum or already
        // has it: either way a top bit shows (a borrow or carry only ever follows such a byte).
        while index + 8 <= bytes.count {
            let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if ((word &- 0x2020_2020_2020_2020) | (word &+ 0x0101_0101_0101_0101) | word) & 0x8080_8080_8080_8080 != 0 {
                return false
            }
            index += 8
        }
        while index < bytes.count {
            guard bytes[index] >= 0x20, bytes[index] < 0x7F else { return false }
            index += 1
        }
        return true
    }

    /// Visible ASCII without space, as allowed in a request-target.
    static func isVisibleASCII(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    static func isOWS(_ byte: UInt8) -> Bool {
        byte == space || byte == tab
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmingOWS<C: BidirectionalCollection<UInt8>>(_ bytes: C) -> C.SubSequence {
        var lower = bytes.startIndex
        var upper = bytes.endIndex
        while lower < upper, isOWS(bytes[lower]) { bytes.formIndex(after: &lower) }
        while upper > lower, isOWS(bytes[bytes.index(before: upper)]) { bytes.formIndex(before: &upper) }
        return bytes[lower..<upper]
    }

    /// Calls `body` with each non-empty element of the comma-separated list `value`, without surrounding spaces
    /// and tabs, until it returns false. Header lists are read on every message, so this does not allocate.
    static func forEachListElement(of value: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                var lower = start
                var upper = end
                while lower < upper, isOWS(bytes[lower]) { lower += 1 }
                while upper > lower, isOWS(bytes[upper - 1]) { upper -= 1 }
                if lower < upper, !body(UnsafeBufferPointer(rebasing: bytes[lower..<upper])) { return }
                start = end + 1
            }
        }
    }

    /// `text` with ASCII letters lowercased and everything else untouched.
    static func asciiLowercased<S: StringProtocol>(_ text: S) -> String {
        asciiLowercased(bytes: text.utf8)
    }

    /// UTF-8 `bytes` as a String with ASCII letters lowercased.
    static func asciiLowercased<C: Collection<UInt8>>(bytes: C) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            var count = 0
            for byte in bytes {
                buffer[count] = lowercasedASCII(byte)
                count += 1
            }
            return count
        }
    }

    static func lowercasedASCII(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
    }

    /// Inlined so that the length check, which settles most header lookups, costs no call.
    @inline(__always)
    static func equalsIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && sameBytesIgnoringASCIICase(lhs, rhs)
    }

    /// `equalsIgnoringASCIICase` for two strings of the same UTF-8 length.
    private static func sameBytesIgnoringASCIICase(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        // Native strings keep their UTF-8 contiguous: compare the bytes in place (header lookups are on every request's path).
        let compared = left.withContiguousStorageIfAvailable { leftBytes in
            right.withContiguousStorageIfAvailable { rightBytes in equalIgnoringASCIICase(leftBytes, rightBytes) }
        }
        if let compared, let equal = compared { return equal }
        return zip(left, right).allSatisfy { lowercasedASCII($0) == lowercasedASCII($1) }
    }

    /// Whether the UTF-8 `bytes` spell `lowercase` (ASCII, lowercase) in any case.
    static func equalsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        bytes.count == lowercase.utf8CodeUnitCount
            && lowercase.withUTF8Buffer { expected in
                zip(bytes, expected).allSatisfy { lowercasedASCII($0) == $1 }
            }
    }

    /// `sameWords` ignoring ASCII case: header names are compared on every message's path.
    private static func equalIgnoringASCIICase(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>)
        -> Bool
    {
        sameWords(lhs, rhs, ignoringASCIICase: true)
    }

    /// Whether `lhs` and `rhs` hold the same bytes, without libc: a received field line is compared with the previous
    /// head's on every message's path.
    static func sameBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        lhs.count == rhs.count && sameWords(lhs, rhs, ignoringASCIICase: false)
    }

    /// Whether the bytes of `lhs` and `rhs` (as many as `lhs` has) match, eight at a time (the last eight overlapping
    /// the ones before); with `ignoringASCIICase`, bytes that differ only in the case of an ASCII letter match.
    @inline(__always)
    private static func sameWords(
        _ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>, ignoringASCIICase: Bool
    ) -> Bool {
        let count = lhs.count
        guard count >= 8, let left = lhs.baseAddress, let right = rhs.baseAddress else {
            for index in 0..<count where lhs[index] != rhs[index] {
                guard ignoringASCIICase, lowercasedASCII(lhs[index]) == lowercasedASCII(rhs[index]) else {
                    return false
                }
            }
            return true
        }
        let (leftBytes, rightBytes) = (UnsafeRawPointer(left), UnsafeRawPointer(right))
        var offset = 0
        while true {
            let start = min(offset, count - 8)
            let leftWord = leftBytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            let rightWord = rightBytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            if leftWord != rightWord {
                guard ignoringASCIICase, lowercasedASCII(leftWord) == lowercasedASCII(rightWord) else { return false }
            }
            if start == count - 8 { return true }
            offset += 8
        }
    }

    /// `lowercasedASCII(_:)` of each of the eight bytes of `word`.
    static func lowercasedASCII(_ word: UInt64) -> UInt64 {
        let tops: UInt64 = 0x8080_8080_8080_8080
        let sevenBits = word & ~tops
        // A byte's top bit is set by the sum when its low seven bits are at least `A` (+0x3F), or more than `Z` (+0x25);
        // no sum carries into the next byte. Bytes of 0x80 and above are left alone.
        let upper = ((sevenBits &+ 0x3F3F_3F3F_3F3F_3F3F) ^ (sevenBits &+ 0x2525_2525_2525_2525)) & ~word & tops
        return word | (upper >> 2)
    }

    /// Field text as a String, and whether the bytes were UTF-8: UTF-8 when they are valid UTF-8, otherwise one
    /// character per byte (ISO 8859-1), so no byte is ever replaced by U+FFFD (and the text does not give them back).
    static func decodeTextNotingUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> (text: String, isUTF8: Bool) {
        let utf8 = String(decoding: bytes, as: UTF8.self)
        if bytes.allSatisfy({ $0 < 0x80 }) || utf8.utf8.elementsEqual(bytes) { return (utf8, true) }
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
        return (String(scalars), false)
    }

    /// Whether `bytes` begin with the ASCII `prefix`.
    static func startsWith(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { expected in
            bytes.count >= expected.count && zip(bytes, expected).allSatisfy { $0 == $1 }
        }
    }

    /// A short, printable rendering of raw protocol bytes for error messages: control and non-ASCII bytes become `\xNN`,
    /// long input is cut to 60 bytes.
    static func quoted<C: Collection<UInt8>>(_ bytes: C) -> String {
        var text = "\""
        for byte in bytes.prefix(60) {
            switch byte {
            case UInt8(ascii: "\""): text += "\\\""
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        if bytes.count > 60 { text += "…" }
        return text + "\""
    }

    /// A String quoted for an error message, with the same escaping as the byte form.
    static func quoted(_ text: String) -> String {
        quoted(Array(text.utf8))
    }

    /// The value of a non-empty run of ASCII decimal digits, or nil (also on overflow).
    static func decimalValue<C: Collection<UInt8>>(_ digits: C) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            if overflowA || overflowB { return nil }
            value = sum
        }
        return value
    }

    /// The value of a hexadecimal digit, or nil.
    package static func hexDigitValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }
}
