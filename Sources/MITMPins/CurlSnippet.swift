/// A `curl --pinnedpubkey` command line.
enum CurlSnippet {
    static func render(_ request: SnippetRequest) -> String {
        // curl compares only the server's own key, so CA pins are left out unless there is nothing else.
        let leafPins = request.pins.filter(\.isLeaf)
        let pins = leafPins.isEmpty ? request.pins : leafPins
        let value = pins.map { "sha256//\($0.pin)" }.joined(separator: ";")
        return "curl --pinnedpubkey '\(value)' 'https://\(request.domain)/'\n"
    }
}
