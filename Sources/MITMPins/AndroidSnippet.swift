/// An Android `res/xml/network_security_config.xml` with one pinned domain.
enum AndroidSnippet {
    static func render(_ request: SnippetRequest) -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
            "<network-security-config>",
            "    <domain-config>",
            "        <domain includeSubdomains=\"\(request.includeSubdomains)\">\(SnippetEscaping.xml(request.domain))</domain>",
            "        <!-- after this date Android stops enforcing the pins, so apps that were never updated keep working -->",
            "        <pin-set expiration=\"\(DateText.day(request.expiration))\">",
        ]
        for pin in request.pins {
            lines.append("            <!-- \(SnippetEscaping.xmlComment(pin.note)) -->")
            lines.append("            <pin digest=\"SHA-256\">\(SnippetEscaping.xml(pin.pin))</pin>")
        }
        lines += ["        </pin-set>", "    </domain-config>", "</network-security-config>"]
        return lines.joined(separator: "\n") + "\n"
    }
}
