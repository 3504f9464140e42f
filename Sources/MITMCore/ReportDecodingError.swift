import Foundation

/// Why a file is not a mitm-proxy report, in words (never `DecodingError` text).
public struct ReportDecodingError: Error, Sendable, CustomStringConvertible {
    /// The reason, e.g. `it has no "hosts" field (it looks like a HAR file)`.
    public let description: String

    init(_ error: any Error, data: Data) {
        let looksLikeHAR = (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["log"] != nil
        let hint = looksLikeHAR ? " (it looks like a HAR file: pass the file written by --report)" : ""
        guard let decoding = error as? DecodingError else {
            description = "it cannot be read as JSON\(hint)"
            return
        }
        switch decoding {
        case .keyNotFound(let key, let context):
            description = "it has no \"\(Self.path(context.codingPath + [key]))\" field\(hint)"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            description = "its \"\(Self.path(context.codingPath))\" field has the wrong type\(hint)"
        case .dataCorrupted(let context):
            description =
                context.codingPath.isEmpty
                ? "it is not JSON\(hint)"
                : "its \"\(Self.path(context.codingPath))\" field holds an unexpected value\(hint)"
        @unknown default:
            description = "it is not in the report format\(hint)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".").replacingOccurrences(
            of: ".[", with: "[")
    }
}
