import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A minimal element tree built with Foundation's `XMLParser`.
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

    /// The root element of `data`, or an error naming `path`, the line and the problem.
    static func parse(_ data: Data, path: String) throws(PinsError) -> Element {
        // Foundation's XMLParser on Linux traps on a comment that is not valid UTF-8 (found by fuzzing); Android
        // reads these files as UTF-8 anyway.
        if String(validating: data, as: UTF8.self) == nil {
            let offset = invalidUTF8Offset(data)
            throw PinsError("\(path) is not valid UTF-8 (byte \(offset) is not): save it as UTF-8, as Android reads it")
        }
        let parser = XMLParser(data: blankingProcessingInstructions(data))
        let builder = Builder()
        parser.delegate = builder
        // On Linux `parse()` can return true after a fatal error, so errors are collected by the delegate.
        let finished = parser.parse()
        if let failure = builder.failure ?? (finished ? nil : parser.parserError.map { ($0, parser.lineNumber) }) {
            throw PinsError("\(path) is not well-formed XML (line \(failure.line)): \(describe(failure.error))")
        }
        guard let root = builder.root else { throw PinsError("\(path) is not well-formed XML: no root element") }
        return root
    }

    /// `data` with every processing instruction but the XML declaration blanked (newlines kept, so line numbers
    /// stay right). Foundation's `XMLParser` on Linux reads a NULL pointer for a processing instruction without data
    /// (`<?x?>`, found by fuzzing), and none carries meaning in these files.
    static func blankingProcessingInstructions(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let declaration = Array("<?xml".utf8)
        let startsWithDeclaration = bytes[start...].starts(with: declaration)
            && bytes.count > start + 5 && [0x20, 0x09, 0x0D, 0x0A].contains(bytes[start + 5])  // libxml2's test for a declaration
        var index = 0
        while index + 1 < bytes.count {
            guard bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "?"),
                  !(index == start && startsWithDeclaration) else {
                index += 1
                continue
            }
            var end = index + 2
            while end + 1 < bytes.count, !(bytes[end] == UInt8(ascii: "?") && bytes[end + 1] == UInt8(ascii: ">")) { end += 1 }
            guard end + 1 < bytes.count else { break }
            for position in index...(end + 1) where bytes[position] != UInt8(ascii: "\n") { bytes[position] = UInt8(ascii: " ") }
            index = end + 2
        }
        return Data(bytes)
    }

    /// The offset of the first byte that breaks UTF-8 in `data`.
    private static func invalidUTF8Offset(_ data: Data) -> Int {
        var bytes = data.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while case .scalarValue(let scalar) = decoder.decode(&bytes) {
            offset += UTF8.width(scalar)
        }
        return offset
    }

    private static func describe(_ error: Error) -> String {
        let code = (error as NSError).code
        switch XMLParser.ErrorCode(rawValue: code) {
        case .tagNameMismatchError?: return "an end tag does not match its start tag"
        case .prematureDocumentEndError?: return "the document ends before every element is closed"
        case .undeclaredEntityError?: return "an undeclared entity (&name;)"
        case .emptyDocumentError?: return "no XML content"
        case .documentStartError?: return "it does not start like an XML document"
        case .attributeNotStartedError?, .attributeNotFinishedError?: return "a malformed attribute"
        default: return "XML error \(code)"
        }
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: Element?
        var failure: (error: Error, line: Int)?
        private var stack: [Element] = []

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            if failure == nil { failure = (parseError, parser.lineNumber) }
        }

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                    qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
            let element = Element(name: elementName, attributes: attributeDict)
            if let parent = stack.last { parent.children.append(element) } else if root == nil { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }
}
