/// Validation of host names taken from request targets, Host headers and SNI before they are used to dial or to mint
/// certificates.
package enum HostName {
    /// The longest DNS name accepted, without a trailing dot.
    package static let maxLength = 253
    /// The longest DNS label accepted.
    package static let maxLabelLength = 63

    /// The host in normal form (ASCII lowercase, one trailing dot removed), or nil unless `raw` is a DNS name of
    /// letters, digits, `-` and `_` labels, an IPv4 dotted quad, or an IPv6 literal without brackets.
    /// A name whose last label is numeric must be a valid dotted quad, so `127.1` and `1.2.3.256` are rejected.
    package static func validate(_ raw: String) -> String? {
        var text = raw
        return text.withUTF8 { bytes -> String? in
            guard !bytes.isEmpty else { return nil }
            var name = bytes
            if name.last == UInt8(ascii: ".") { name = UnsafeBufferPointer(rebasing: name.dropLast()) }
            var labelStart = 0
            var lastLabelStart = 0
            var hasUppercase = false
            for (index, byte) in name.enumerated() {
                if byte >= 0x80 { return nil }
                if byte == UInt8(ascii: ":") {
                    return isIPv6(Array(bytes)[...]) ? HTTPSyntax.asciiLowercased(raw) : nil
                }
                if byte == UInt8(ascii: ".") {
                    guard (1...maxLabelLength).contains(index - labelStart) else { return nil }
                    labelStart = index + 1
                    lastLabelStart = labelStart
                } else {
                    guard isLabelByte(byte) else { return nil }
                    if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUppercase = true }
                }
            }
            guard !name.isEmpty, name.count <= maxLength, (1...maxLabelLength).contains(name.count - labelStart) else {
                return nil
            }
            if looksNumeric(UnsafeBufferPointer(rebasing: name[lastLabelStart...])), !isIPv4(Array(name)[...]) {
                return nil
            }
            // Most names come in normal form already: give the caller's string back rather than a copy.
            if !hasUppercase && name.count == bytes.count { return raw }
            return String(decoding: name.map(HTTPSyntax.lowercasedASCII), as: UTF8.self)
        }
    }

    /// Whether `host` is an IPv4 dotted quad or an IPv6 literal (without brackets).
    package static func isIPAddress(_ host: String) -> Bool {
        var host = host
        return host.withUTF8 { bytes in
            // Most hosts are names: a colon is needed for IPv6, only digits and dots make IPv4.
            var digitsAndDots = true
            for byte in bytes {
                if byte == UInt8(ascii: ":") { return isIPv6(Array(bytes)[...]) }
                if byte != UInt8(ascii: ".") && (byte < UInt8(ascii: "0") || byte > UInt8(ascii: "9")) {
                    digitsAndDots = false
                }
            }
            return digitsAndDots && isIPv4(Array(bytes)[...])
        }
    }

    /// Whether `host` is an IPv6 literal (without brackets).
    package static func isIPv6(_ host: String) -> Bool {
        host.utf8.contains(UInt8(ascii: ":")) && isIPv6(Array(host.utf8)[...])
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// A label that URL parsers read as a number (decimal, or `0x` hex), turning the whole name into an IPv4 address.
    private static func looksNumeric<Label: Collection<UInt8>>(_ label: Label) -> Bool {
        if label.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) { return true }
        guard label.first == UInt8(ascii: "0"),
            HTTPSyntax.lowercasedASCII(label.dropFirst().first ?? 0) == UInt8(ascii: "x")
        else { return false }
        return label.dropFirst(2).allSatisfy { HTTPSyntax.hexDigitValue($0) != nil }
    }

    /// Four decimal parts of 0...255, without leading zeros (which some resolvers read as octal).
    static func isIPv4(_ bytes: ArraySlice<UInt8>) -> Bool {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                guard (1...3).contains(part.count), let value = HTTPSyntax.decimalValue(part), value <= 255 else {
                    return false
                }
                return part.count == 1 || part.first != UInt8(ascii: "0")
            }
    }

    /// Eight groups of one to four hex digits separated by colons, where one `::` may stand for one or more zero groups
    /// and the last 32 bits may be written as a dotted quad.
    static func isIPv6(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= 2, bytes.count <= 45 else { return false }
        var elisionAt: Int?
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: ":") {
                guard elisionAt == nil else { return false }
                elisionAt = index
                index += 2
            } else {
                index += 1
            }
        }
        guard let elisionAt else {
            return groupCount(bytes, allowsTrailingIPv4: true) == 8
        }
        let left = bytes[..<elisionAt]
        let right = bytes[(elisionAt + 2)...]
        guard let leftCount = groupCount(left, allowsTrailingIPv4: false),
            let rightCount = groupCount(right, allowsTrailingIPv4: true)
        else { return false }
        return leftCount + rightCount <= 7
    }

    /// How many 16-bit groups a colon-separated run holds (a trailing dotted quad counts two), or nil if malformed.
    private static func groupCount(_ bytes: ArraySlice<UInt8>, allowsTrailingIPv4: Bool) -> Int? {
        if bytes.isEmpty { return 0 }
        let groups = bytes.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        var count = 0
        for (position, group) in groups.enumerated() {
            if allowsTrailingIPv4 && position == groups.count - 1 && group.contains(UInt8(ascii: ".")) {
                guard isIPv4(group) else { return nil }
                count += 2
            } else {
                guard (1...4).contains(group.count), group.allSatisfy({ HTTPSyntax.hexDigitValue($0) != nil }) else {
                    return nil
                }
                count += 1
            }
        }
        return count
    }
}
