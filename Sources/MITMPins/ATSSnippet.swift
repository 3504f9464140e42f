/// The `NSAppTransportSecurity` > `NSPinnedDomains` fragment of an `Info.plist`.
enum ATSSnippet {
    static func render(_ request: SnippetRequest) -> String {
        let leaf = request.pins.filter { !$0.isCA }
        let ca = request.pins.filter(\.isCA)
        var lines = [
            "<key>NSAppTransportSecurity</key>",
            "<dict>",
            "    <key>NSPinnedDomains</key>",
            "    <dict>",
            "        <key>\(SnippetEscaping.xml(request.domain))</key>",
            "        <dict>",
        ]
        if request.includeSubdomains {
            lines += [
                "            <!-- covers one level of subdomains: a.\(SnippetEscaping.xmlComment(request.domain)), not b.a.\(SnippetEscaping.xmlComment(request.domain)) -->",
                "            <key>NSIncludesSubdomains</key>",
                "            <true/>",
            ]
        }
        if !leaf.isEmpty && !ca.isEmpty {
            lines.append(
                "            <!-- ATS requires a match in each list: a new leaf key fails even if a CA pin matches -->")
        }
        lines += identities("NSPinnedLeafIdentities", leaf) + identities("NSPinnedCAIdentities", ca)
        lines += ["        </dict>", "    </dict>", "</dict>"]
        return lines.joined(separator: "\n") + "\n"
    }

    private static func identities(_ key: String, _ pins: [SnippetPin]) -> [String] {
        guard !pins.isEmpty else { return [] }
        var lines = ["            <key>\(key)</key>", "            <array>"]
        for pin in pins {
            lines += [
                "                <!-- \(SnippetEscaping.xmlComment(pin.note)) -->",
                "                <dict>",
                "                    <key>SPKI-SHA256-BASE64</key>",
                "                    <string>\(SnippetEscaping.xml(pin.pin))</string>",
                "                </dict>",
            ]
        }
        return lines + ["            </array>"]
    }
}
