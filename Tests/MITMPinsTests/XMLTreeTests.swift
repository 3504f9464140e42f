import Foundation
import Testing

@testable import MITMPins

/// The XML reader behind `pins check` of an Android network_security_config.xml.
struct XMLTreeTests {
    private func parse(_ text: String) throws(PinsError) -> XMLTree.Element {
        try XMLTree.parse(Data(text.utf8), path: "nsc.xml")
    }

    private func failure(_ text: String) -> String {
        do {
            _ = try parse(text)
            return "parsed"
        } catch {
            return error.message
        }
    }

    @Test func elementsAttributesAndTextAreRead() throws {
        let root = try parse(
            """
            \u{FEFF}<?xml version="1.0" encoding="utf-8"?>
            <!DOCTYPE network-security-config [ <!ELEMENT x (#PCDATA)> <!-- "]>" --> ]>
            <!-- a comment before the root -->
            <network-security-config>
                <domain-config cleartextTrafficPermitted='false'>
                    <domain includeSubdomains="true">a&amp;b&#46;test&#x21;</domain>
                    <pin-set expiration = "2030-01-01"><!-- kept out of the text --><pin digest="SHA-256"><![CDATA[AB<C>]]>D=</pin><pin/></pin-set>
                </domain-config>
            </network-security-config>
            <!-- and one after -->
            """)
        #expect(root.name == "network-security-config")
        let config = try #require(root.children.first)
        #expect(config.attributes == ["cleartextTrafficPermitted": "false"])
        #expect(config.children.map(\.name) == ["domain", "pin-set"])
        #expect(config.children[0].text == "a&b.test!")
        #expect(config.children[0].attributes["includeSubdomains"] == "true")
        let pinSet = config.children[1]
        #expect(pinSet.attributes["expiration"] == "2030-01-01")
        #expect(pinSet.children.map(\.name) == ["pin", "pin"])
        #expect(pinSet.children[0].text == "AB<C>D=")
        #expect(pinSet.children[0].attributes["digest"] == "SHA-256")
    }

    @Test func eachMalformedDocumentSaysWhatAndOnWhichLine() {
        #expect(
            failure("<a>\n<b>\n</a>")
                == "nsc.xml is not well-formed XML (line 3): an end tag does not match its start tag")
        #expect(
            failure("<a>\n<b></b>\n")
                == "nsc.xml is not well-formed XML (line 3): the document ends before every element is closed")
        #expect(failure("<a>&nbsp;</a>") == "nsc.xml is not well-formed XML (line 1): an undeclared entity (&nbsp;)")
        #expect(
            failure("<a>fish & chips</a>")
                == "nsc.xml is not well-formed XML (line 1): an & that starts no entity (write &amp;)")
        #expect(
            failure("<a>&#0;</a>")
                == "nsc.xml is not well-formed XML (line 1): a character reference to no character (&#0;)")
        #expect(failure("  \n ") == "nsc.xml is not well-formed XML (line 2): no XML content")
        #expect(failure("hello") == "nsc.xml is not well-formed XML (line 1): it does not start like an XML document")
        #expect(
            failure("<a x=\"1\" x=\"2\"/>") == "nsc.xml is not well-formed XML (line 1): the attribute x appears twice")
        #expect(failure("<a x=1/>") == "nsc.xml is not well-formed XML (line 1): a malformed attribute")
        #expect(failure("<a x=\"1\"y=\"2\"/>") == "nsc.xml is not well-formed XML (line 1): a malformed attribute")
        #expect(failure("<a x=\"<\"/>") == "nsc.xml is not well-formed XML (line 1): a < inside an attribute value")
        #expect(failure("<a/><b/>") == "nsc.xml is not well-formed XML (line 1): content after the root element")
        #expect(failure("<a>\n<!-- open") == "nsc.xml is not well-formed XML (line 2): a comment that is not closed")
        #expect(failure("<a x=\"1") == "nsc.xml is not well-formed XML (line 1): a malformed attribute")
        #expect(
            failure("<a") == "nsc.xml is not well-formed XML (line 1): the document ends before every element is closed"
        )
        #expect(
            failure("<!DOCTYPE a [")
                == "nsc.xml is not well-formed XML (line 1): a document type declaration that is not closed")
    }

    @Test func nestingDeeperThanTheLimitIsRefusedAndTheLimitItselfIsRead() throws {
        let limit = XMLTree.maximumDepth
        let deepest = try parse(String(repeating: "<a>", count: limit) + String(repeating: "</a>", count: limit))
        var depth = 1
        var element = deepest
        while let child = element.children.first {
            depth += 1
            element = child
        }
        #expect(depth == limit)
        let tooDeep = String(repeating: "<a>", count: limit + 1) + String(repeating: "</a>", count: limit + 1)
        #expect(failure(tooDeep) == "nsc.xml is not well-formed XML (line 1): elements nest more than \(limit) deep")
        // Self-closing elements add no depth.
        _ = try parse(String(repeating: "<a>", count: limit) + "<b/>" + String(repeating: "</a>", count: limit))
    }
}
