import Foundation

/// A minimal element tree of an XML document: what `network_security_config.xml` needs (elements, attributes,
/// text, the five predefined and numeric character references, CDATA), read by a small reader of our own.
/// Foundation's `XMLParser` linked libxml2 and the system ICU into the proxy (0.9 MiB of its resident set) for
/// this one file, and trapped or read a NULL pointer on inputs the fuzz target found.
/// Comments, processing instructions and the document type declaration carry no meaning here and are skipped;
/// an entity the document would declare in its DTD is refused like any undeclared one (as Android's parser does).
enum XMLTree {
    /// One element: name, attributes, direct text, children.
    final class Element {
        let name: String
        let attributes: [String: String]
        var text = ""
        var children: [Element] = []

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }
    }

    /// Deeper documents are refused (libxml2's limit too); the readers above recurse over nested elements.
    static let maximumDepth = 256

    /// Why a document cannot be read, to follow its name: `is not well-formed XML (line 3): ...`.
    struct Failure: Error {
        let reason: String
        /// The bytes are not UTF-8, rather than not XML.
        let isEncoding: Bool
    }

    /// The root element of `data`, or an error naming `path`, the line and the problem.
    static func parse(_ data: Data, path: String) throws(PinsError) -> Element {
        do {
            return try parse([UInt8](data))
        } catch {
            throw PinsError(
                "\(path) \(error.reason)" + (error.isEncoding ? ": save it as UTF-8, as Android reads it" : ""))
        }
    }

    /// The root element of `bytes`.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> Element {
        if String(validating: bytes, as: UTF8.self) == nil {
            throw Failure(reason: "is not valid UTF-8 (byte \(invalidUTF8Offset(bytes)) is not)", isEncoding: true)
        }
        var reader = XMLReader(bytes: bytes)
        do {
            return try reader.document()
        } catch {
            throw Failure(
                reason: "is not well-formed XML (line \(reader.line(at: error.offset))): \(error.problem)",
                isEncoding: false)
        }
    }

    /// The offset of the first byte that breaks UTF-8 in `bytes`.
    private static func invalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            offset += UTF8.width(scalar)
        }
        return offset
    }
}

/// What is wrong with a document, and where.
struct XMLSyntaxError: Error {
    let offset: Int
    let problem: String
}

/// Reads one document from bytes already known to be UTF-8.
struct XMLReader {
    private let bytes: [UInt8]
    private var index = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    func line(at offset: Int) -> Int {
        1 + bytes[..<min(offset, bytes.count)].lazy.filter { $0 == UInt8(ascii: "\n") }.count
    }

    mutating func document() throws(XMLSyntaxError) -> XMLTree.Element {
        try skipMisc()
        guard index < bytes.count else { throw XMLSyntaxError(offset: index, problem: "no XML content") }
        if starts(with: "<!DOCTYPE") {
            try skipDocumentType()
            try skipMisc()
        }
        guard starts(with: "<"), index + 1 < bytes.count, isNameStart(bytes[index + 1]) else {
            throw XMLSyntaxError(offset: index, problem: "it does not start like an XML document")
        }
        let root = try element()
        try skipMisc()
        guard index == bytes.count else {
            throw XMLSyntaxError(offset: index, problem: "content after the root element")
        }
        return root
    }

    /// The element starting at `<`, read without recursion: open elements are kept on a stack.
    private mutating func element() throws(XMLSyntaxError) -> XMLTree.Element {
        var open: [XMLTree.Element] = []
        var root: XMLTree.Element?
        repeat {
            if starts(with: "</") {
                let start = index
                index += 2
                let name = try readName()
                skipSpace()
                try expect(">", "a malformed end tag")
                guard let element = open.popLast(), element.name == name else {
                    throw XMLSyntaxError(offset: start, problem: "an end tag does not match its start tag")
                }
            } else if starts(with: "<!--") {
                try skip(past: "-->", from: index + 4, "a comment that is not closed")
            } else if starts(with: "<![CDATA[") {
                let start = index + 9
                try skip(past: "]]>", from: start, "a CDATA section that is not closed")
                open.last?.text += String(decoding: bytes[start..<(index - 3)], as: UTF8.self)
            } else if starts(with: "<?") {
                try skip(past: "?>", from: index + 2, "a processing instruction that is not closed")
            } else if starts(with: "<") {
                let start = index
                index += 1
                let (element, closed) = try startTag()
                if let parent = open.last { parent.children.append(element) } else { root = element }
                if !closed {
                    guard open.count < XMLTree.maximumDepth else {
                        throw XMLSyntaxError(
                            offset: start, problem: "elements nest more than \(XMLTree.maximumDepth) deep")
                    }
                    open.append(element)
                }
            } else {
                let text = try characterData(until: UInt8(ascii: "<"))
                open.last?.text += text
            }
            if !open.isEmpty, index >= bytes.count {
                throw XMLSyntaxError(offset: index, problem: "the document ends before every element is closed")
            }
        } while !open.isEmpty
        guard let root else { throw XMLSyntaxError(offset: index, problem: "no root element") }
        return root
    }

    /// After `<`: the name, the attributes and whether the tag closes itself (`/>`).
    private mutating func startTag() throws(XMLSyntaxError) -> (XMLTree.Element, closed: Bool) {
        let name = try readName()
        var attributes: [String: String] = [:]
        while true {
            let hadSpace = skipSpace()
            if starts(with: "/>") {
                index += 2
                return (XMLTree.Element(name: name, attributes: attributes), true)
            }
            if starts(with: ">") {
                index += 1
                return (XMLTree.Element(name: name, attributes: attributes), false)
            }
            let start = index
            guard hadSpace, index < bytes.count else {
                throw XMLSyntaxError(
                    offset: index,
                    problem: index < bytes.count
                        ? "a malformed attribute"
                        : "the document ends before every element is closed")
            }
            let attribute = try readName()
            skipSpace()
            try expect("=", "a malformed attribute")
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw XMLSyntaxError(offset: index, problem: "a malformed attribute")
            }
            let quote = bytes[index]
            index += 1
            let value = try characterData(until: quote)
            guard index < bytes.count else { throw XMLSyntaxError(offset: start, problem: "a malformed attribute") }
            index += 1
            guard attributes.updateValue(value, forKey: attribute) == nil else {
                throw XMLSyntaxError(offset: start, problem: "the attribute \(attribute) appears twice")
            }
        }
    }

    /// Text up to `terminator` (not consumed) or the end, with character references replaced.
    private mutating func characterData(until terminator: UInt8) throws(XMLSyntaxError) -> String {
        var text: [UInt8] = []
        while index < bytes.count, bytes[index] != terminator {
            switch bytes[index] {
            case UInt8(ascii: "&"):
                text += try reference()
            case UInt8(ascii: "<"):
                throw XMLSyntaxError(offset: index, problem: "a < inside an attribute value")
            default:
                text.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `&name;` or `&#digits;` / `&#xhex;`: the UTF-8 of what it stands for.
    private mutating func reference() throws(XMLSyntaxError) -> [UInt8] {
        let start = index
        guard let end = bytes[start...].prefix(40).firstIndex(of: UInt8(ascii: ";")) else {
            throw XMLSyntaxError(offset: start, problem: "an & that starts no entity (write &amp;)")
        }
        let name = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
        index = end + 1
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            let number: UInt32? =
                name.hasPrefix("#x")
                ? UInt32(name.dropFirst(2), radix: 16)
                : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
            guard name.hasPrefix("#") else {
                throw XMLSyntaxError(offset: start, problem: "an undeclared entity (&\(name);)")
            }
            guard let number, number != 0, let scalar = Unicode.Scalar(number) else {
                throw XMLSyntaxError(offset: start, problem: "a character reference to no character (&\(name);)")
            }
            return Array(String(Character(scalar)).utf8)
        }
    }

    /// Whitespace, comments and processing instructions (the XML declaration among them) between the markup.
    private mutating func skipMisc() throws(XMLSyntaxError) {
        while true {
            skipSpace()
            if starts(with: "<!--") {
                try skip(past: "-->", from: index + 4, "a comment that is not closed")
            } else if starts(with: "<?") {
                try skip(past: "?>", from: index + 2, "a processing instruction that is not closed")
            } else {
                return
            }
        }
    }

    /// `<!DOCTYPE name ... [internal subset]>`: skipped, brackets and quotes respected.
    private mutating func skipDocumentType() throws(XMLSyntaxError) {
        let start = index
        var quote: UInt8?
        var inSubset = false
        index += 9
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                inSubset = true
            } else if byte == UInt8(ascii: "]") {
                inSubset = false
            } else if byte == UInt8(ascii: ">"), !inSubset {
                return
            }
        }
        throw XMLSyntaxError(offset: start, problem: "a document type declaration that is not closed")
    }

    private mutating func readName() throws(XMLSyntaxError) -> String {
        let start = index
        guard index < bytes.count, isNameStart(bytes[index]) else {
            throw XMLSyntaxError(
                offset: index,
                problem: index < bytes.count
                    ? "a malformed tag or attribute name"
                    : "the document ends before every element is closed")
        }
        while index < bytes.count, isNameByte(bytes[index]) { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index > start
    }

    private mutating func skip(past terminator: StaticString, from start: Int, _ problem: String) throws(XMLSyntaxError)
    {
        let opened = index
        index = start
        while index < bytes.count {
            if starts(with: terminator) {
                index += terminator.utf8CodeUnitCount
                return
            }
            index += 1
        }
        throw XMLSyntaxError(offset: opened, problem: problem)
    }

    private mutating func expect(_ byte: Unicode.Scalar, _ problem: String) throws(XMLSyntaxError) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else {
            throw XMLSyntaxError(offset: index, problem: problem)
        }
        index += 1
    }

    private func starts(with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        return prefix.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
    }

    private func isNameStart(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
            || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: ":")
    }

    private func isNameByte(_ byte: UInt8) -> Bool {
        isNameStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".")
    }
}
