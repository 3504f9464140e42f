import MITMCore

/// Where a map-local rule finds the file for a request: the rule's file itself, or, for a directory,
/// the file the rest of the request's path names inside it (`index.html` for the directory itself).
/// The rest of the path is percent-decoded and may not climb out of the directory.
package enum LocalFilePath {
    /// The file to serve, or nil when the path is not allowed (`..`, NUL, a bad escape).
    package static func resolve(root: String, isDirectory: Bool, remainder: String) -> String? {
        guard isDirectory else { return root }
        guard let decoded = percentDecoded(remainder) else { return nil }
        var segments: [Substring] = []
        for segment in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." { continue }
            if segment == ".." || segment.contains("\0") || segment.contains("\\") { return nil }
            segments.append(segment)
        }
        let base = root.hasSuffix("/") ? String(root.dropLast()) : root
        if segments.isEmpty || remainder.hasSuffix("/") { segments.append("index.html") }
        return base + "/" + segments.joined(separator: "/")
    }

    /// `%xx` escapes decoded as UTF-8; nil for a malformed escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(HTTPSyntax.hexDigitValue),
                let low = iterator.next().flatMap(HTTPSyntax.hexDigitValue)
            else { return nil }
            bytes.append(UInt8(high * 16 + low))
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
