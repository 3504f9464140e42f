import Foundation

/// Turns the element tree of an XML property list (`<plist><dict><key>…</key><string>…</string></dict></plist>`)
/// into a `PropertyList`. Problems name where they are, as the chain of dictionary keys that leads there.
enum XMLPropertyListReader {
    /// The one value inside `<plist>`.
    static func value(of root: XMLTree.Element) throws(PropertyListError) -> PropertyList {
        guard root.name == "plist" else { throw PropertyListError("its root element is <\(root.name)>, not <plist>") }
        try expectNoText(in: root, place: [])
        guard root.children.count == 1 else {
            throw PropertyListError("<plist> holds \(root.children.count) values; it holds exactly one")
        }
        return try value(of: root.children[0], place: [], depth: 0)
    }

    private static func value(of element: XMLTree.Element, place: [String], depth: Int) throws(PropertyListError)
        -> PropertyList
    {
        switch element.name {
        case "dict":
            try expectNoText(in: element, place: place)
            let children = try containerChildren(of: element, place: place, depth: depth)
            guard children.count.isMultiple(of: 2) else {
                throw PropertyListError("a dictionary\(where: place) has a key without a value")
            }
            var entries: [String: PropertyList] = [:]
            for pair in stride(from: 0, to: children.count, by: 2) {
                let key = children[pair]
                guard key.name == "key", key.children.isEmpty else {
                    throw PropertyListError("a dictionary\(where: place) has <\(key.name)> where a <key> belongs")
                }
                let inner = place + [key.text]
                guard
                    entries.updateValue(
                        try value(of: children[pair + 1], place: inner, depth: depth + 1), forKey: key.text) == nil
                else {
                    throw PropertyListError("a dictionary\(where: place) has the key \"\(key.text)\" twice")
                }
            }
            return .dictionary(entries)
        case "array":
            try expectNoText(in: element, place: place)
            var items: [PropertyList] = []
            for (index, child) in try containerChildren(of: element, place: place, depth: depth).enumerated() {
                items.append(try value(of: child, place: place + ["[\(index)]"], depth: depth + 1))
            }
            return .array(items)
        case "string":
            return .string(try leafText(of: element, place: place))
        case "true", "false":
            guard try leafText(of: element, place: place).allSatisfy(\.isWhitespace) else {
                throw PropertyListError("<\(element.name)/>\(where: place) holds text")
            }
            return .boolean(element.name == "true")
        case "integer":
            let text = try leafText(of: element, place: place).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let number = integer(text) else {
                throw PropertyListError("<integer>\(where: place) holds \"\(text.prefix(40))\", not an integer")
            }
            return .integer(number)
        case "real":
            let text = try leafText(of: element, place: place).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let number = Double(text) else {
                throw PropertyListError("<real>\(where: place) holds \"\(text.prefix(40))\", not a number")
            }
            return .real(number)
        case "date":
            let text = try leafText(of: element, place: place).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let date = ISO8601DateFormatter().date(from: text) else {
                throw PropertyListError(
                    "<date>\(where: place) holds \"\(text.prefix(40))\", not a date like 2026-01-31T12:00:00Z")
            }
            return .date(date)
        case "data":
            let text = try leafText(of: element, place: place).filter { !$0.isWhitespace }
            guard let bytes = Data(base64Encoded: text) else {
                throw PropertyListError("<data>\(where: place) is not base64")
            }
            return .data([UInt8](bytes))
        case "key":
            throw PropertyListError("a <key>\(where: place) stands where a value belongs")
        default:
            throw PropertyListError("<\(element.name)>\(where: place) is not a property list element")
        }
    }

    /// The children of an array or dictionary one level below `depth`, once the nesting is known to be allowed.
    private static func containerChildren(of element: XMLTree.Element, place: [String], depth: Int)
        throws(PropertyListError) -> [XMLTree.Element]
    {
        guard depth < PropertyList.maximumDepth else {
            throw PropertyListError("its arrays and dictionaries nest more than \(PropertyList.maximumDepth) deep")
        }
        return element.children
    }

    /// The text of an element that holds no elements.
    private static func leafText(of element: XMLTree.Element, place: [String]) throws(PropertyListError) -> String {
        guard element.children.isEmpty else {
            throw PropertyListError(
                "<\(element.name)>\(where: place) holds <\(element.children[0].name)>, but only text belongs there")
        }
        return element.text
    }

    /// Containers hold elements and whitespace only.
    private static func expectNoText(in element: XMLTree.Element, place: [String]) throws(PropertyListError) {
        guard element.text.allSatisfy(\.isWhitespace) else {
            throw PropertyListError("<\(element.name)>\(where: place) holds text outside its elements")
        }
    }

    /// Decimal or `0x` hexadecimal, with an optional sign, as CoreFoundation writes and reads them.
    private static func integer(_ text: String) -> Int128? {
        var digits = Substring(text)
        var negative = false
        if let sign = digits.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            digits = digits.dropFirst()
        }
        let hex = digits.lowercased().hasPrefix("0x")
        let body = hex ? digits.dropFirst(2) : digits
        guard !body.isEmpty, body.allSatisfy({ $0.isASCII && $0.isHexDigit && (hex || $0.isNumber) }),
            let magnitude = Int128(body, radix: hex ? 16 : 10)
        else { return nil }
        return negative ? -magnitude : magnitude
    }
}

private extension DefaultStringInterpolation {
    /// ` at NSAppTransportSecurity > NSPinnedDomains`, or nothing at the top.
    mutating func appendInterpolation(where place: [String]) {
        if !place.isEmpty { appendLiteral(" at " + place.joined(separator: " > ")) }
    }
}
