/// Kotlin code building an OkHttp `CertificatePinner`.
enum OkHttpSnippet {
    static func render(_ request: SnippetRequest) -> String {
        // `**.` matches the domain itself and every subdomain, like Android's includeSubdomains.
        let pattern = SnippetEscaping.quoted(request.includeSubdomains ? "**.\(request.domain)" : request.domain)
        var lines = ["val certificatePinner = CertificatePinner.Builder()"]
        for pin in request.pins {
            lines.append(
                "    .add(\(pattern), \(SnippetEscaping.quoted("sha256/\(pin.pin)"))) // \(SnippetEscaping.lineComment(pin.note))"
            )
        }
        lines += [
            "    .build()",
            "val client = OkHttpClient.Builder()",
            "    .certificatePinner(certificatePinner)",
            "    .build()",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
