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

    /// The root element of `data`, or an error naming `path` and the line.
    static func parse(_ data: Data, path: String) throws(PinsError) -> Element {
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "no root element"
            throw PinsError("\(path) is not well-formed XML (line \(parser.lineNumber)): \(reason)")
        }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: Element?
        private var stack: [Element] = []

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
