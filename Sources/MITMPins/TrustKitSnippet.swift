/// A TrustKit configuration, in Swift.
enum TrustKitSnippet {
    static func render(_ request: SnippetRequest) -> String {
        var lines = [
            "import TrustKit",
            "",
            "let trustKitConfig: [String: Any] = [",
            "    kTSKSwizzleNetworkDelegates: false,",
            "    kTSKPinnedDomains: [",
            "        \(SnippetEscaping.quoted(request.domain)): [",
            "            kTSKEnforcePinning: true,",
            "            kTSKIncludeSubdomains: \(request.includeSubdomains),",
        ]
        if request.expirationGiven {
            lines.append("            kTSKExpirationDate: \(SnippetEscaping.quoted(DateText.day(request.expiration))),")
        }
        lines.append("            kTSKPublicKeyHashes: [")
        if request.pins.count < 2 {
            lines.append(
                "                // TrustKit refuses fewer than two pins: add a backup pin (a spare key kept offline)")
        }
        for pin in request.pins {
            lines.append(
                "                \(SnippetEscaping.quoted(pin.pin)), // \(SnippetEscaping.lineComment(pin.note))")
        }
        lines += [
            "            ],",
            "        ],",
            "    ],",
            "]",
            "TrustKit.initSharedInstance(withConfiguration: trustKitConfig)",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
