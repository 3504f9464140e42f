import Testing

@testable import MITMCore

/// Which bodies a HAR shows as text: the media type compared byte by byte must say what lowercasing it and searching
/// the words said.
@Suite struct HARBodyTextTests {
    private static let words = ["json", "xml", "javascript", "x-www-form-urlencoded", "graphql", "csv", "yaml"]

    private static func lowercasedSearch(_ mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        return type.hasPrefix("text/") || words.contains { type.contains($0) }
    }

    @Test func textualTypesAreFoundInAnyCase() {
        let types = [
            "text/plain", "TEXT/HTML; charset=utf-8", "Text/", "text", "application/json", "application/problem+JSON",
            "Application/Vnd.Api+Json", "application/xml", "image/svg+xml", "application/javascript", "text/javascript",
            "application/x-www-form-urlencoded", "application/graphql-response+json", "text/csv", "application/x-yaml",
            "application/octet-stream", "image/png", "", "x-unknown", "json", "jso", "application/js on", "texte/plain",
            "application/jsonp", "appl\u{130}cation/json", "t\u{e9}xt/plain", "application/\u{212a}son", "YAML",
        ]
        for type in types {
            #expect(HARBodyText.isTextual(type) == Self.lowercasedSearch(type), "\(type)")
        }
    }
}
