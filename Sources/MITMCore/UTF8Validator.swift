/// Checks that bytes fed piece by piece form valid UTF-8 (RFC 3629: no overlong forms, no surrogates,
/// nothing above U+10FFFF), without keeping them: a text message's validity over every fragment.
package struct UTF8Validator: Sendable, Equatable {
    /// Continuation bytes the current sequence still needs.
    private var needed = 0
    /// The range the next continuation byte must fall in (narrower right after some lead bytes).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF
    /// False from the first invalid byte on.
    package private(set) var isValid = true

    /// A validator at the start of a text.
    package init() {}

    /// Whether everything fed so far is valid UTF-8 that does not end inside a sequence.
    package var isComplete: Bool { isValid && needed == 0 }

    /// Checks the next bytes of the text.
    package mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard isValid else { return }
        for byte in bytes {
            if needed == 0 {
                if byte < 0x80 { continue }
                if !begin(byte) {
                    isValid = false
                    return
                }
                continue
            }
            guard byte >= lower && byte <= upper else {
                isValid = false
                return
            }
            needed -= 1
            lower = 0x80
            upper = 0xBF
        }
    }

    /// Checks the next bytes of the text.
    package mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// Starts a multi-byte sequence at lead byte `byte`; false when no sequence starts with it.
    private mutating func begin(_ byte: UInt8) -> Bool {
        switch byte {
        case 0xC2...0xDF: needed = 1
        case 0xE0:
            needed = 2
            lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: needed = 2
        case 0xED:
            needed = 2
            upper = 0x9F
        case 0xF0:
            needed = 3
            lower = 0x90
        case 0xF1...0xF3: needed = 3
        case 0xF4:
            needed = 3
            upper = 0x8F
        default: return false
        }
        return true
    }
}
