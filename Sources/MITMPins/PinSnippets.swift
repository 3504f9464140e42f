import Foundation

/// One pin to put in a snippet, with what it pins.
public struct SnippetPin: Sendable, Equatable {
    /// The SPKI-SHA256-BASE64 value.
    public let pin: String
    /// Whether it goes with CA pins (`NSPinnedCAIdentities`) rather than leaf pins.
    public let isCA: Bool
    /// Whether it pins the server's own key (the only kind curl compares).
    public let isLeaf: Bool
    /// A comment for the snippet: `leaf CN=api.example.com, not after 2026-05-01`.
    public let note: String

    /// The pin of a described certificate.
    public init(_ element: ChainElement) {
        pin = element.pin
        isCA = element.position.isCA
        isLeaf = element.position == .leaf
        note =
            "\(element.position.rawValue) \(element.subject.isEmpty ? "(empty subject)" : element.subject), not after \(DateText.day(element.notAfter))"
    }

    /// A backup pin given by value or computed from a spare key, listed with leaf or CA pins.
    public init(backup pin: String, isCA: Bool, note: String = "backup pin") {
        self.pin = pin
        self.isCA = isCA
        isLeaf = !isCA
        self.note = note
    }
}

/// What a snippet pins: one domain and its pins.
public struct SnippetRequest: Sendable {
    /// The domain the pins apply to.
    public var domain: String
    /// Whether subdomains are covered too.
    public var includeSubdomains: Bool
    /// The pins, leaf first, without duplicates.
    public var pins: [SnippetPin]
    /// When Android stops enforcing the pin-set.
    public var expiration: Date
    /// Whether `expiration` was asked for (TrustKit gets one only then; Android always needs one).
    public var expirationGiven: Bool

    /// A request for `domain`.
    public init(
        domain: String, includeSubdomains: Bool, pins: [SnippetPin], expiration: Date, expirationGiven: Bool = false
    ) {
        self.domain = domain
        self.includeSubdomains = includeSubdomains
        var seen = Set<String>()
        self.pins = pins.filter { seen.insert($0.pin).inserted }
        self.expiration = expiration
        self.expirationGiven = expirationGiven
    }
}

/// Ready-to-paste pin configurations for each pinning API.
public enum PinSnippets {
    /// The snippet for `format` (a snippet format), ending with a newline.
    public static func render(_ format: PinsOutputFormat, _ request: SnippetRequest) -> String {
        switch format {
        case .ats: return ATSSnippet.render(request)
        case .okhttp: return OkHttpSnippet.render(request)
        case .android: return AndroidSnippet.render(request)
        case .trustkit: return TrustKitSnippet.render(request)
        case .curl: return CurlSnippet.render(request)
        case .text, .json: return ""
        }
    }

    /// Warnings to print beside the snippet (on standard error), e.g. a missing backup pin.
    public static func warnings(_ format: PinsOutputFormat, _ request: SnippetRequest) -> [String] {
        var warnings: [String] = []
        if request.pins.count < 2 {
            warnings.append(
                "only one pin: when that key changes, every installed app stops connecting until it is updated; add a backup pin (--backup-pin or --backup-key)"
            )
        }
        if format == .trustkit && request.pins.count < 2 {
            warnings.append("TrustKit refuses a configuration with fewer than two pins")
        }
        if format == .ats && request.pins.contains(where: \.isCA) && request.pins.contains(where: { !$0.isCA }) {
            warnings.append(
                "ATS requires a match in each list present: with leaf and CA pins, a new leaf key breaks the domain even though the CA pins still match; keep one list (--only leaf or --only ca) unless that is what you want"
            )
        }
        if format == .curl && !request.pins.contains(where: \.isLeaf) {
            warnings.append("curl compares only the server's own (leaf) key: CA pins never match in --pinnedpubkey")
        }
        return warnings
    }
}

/// Escaping for the languages snippets are written in.
enum SnippetEscaping {
    /// Text safe inside XML elements and attribute values.
    static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Text safe inside an XML comment (which may not contain `--`).
    static func xmlComment(_ text: String) -> String {
        var result = text
        while result.contains("--") { result = result.replacingOccurrences(of: "--", with: "- -") }
        return result
    }

    /// A double-quoted Kotlin or Swift string literal (`$` starts a Kotlin template).
    static func quoted(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "$", with: "\\$")
        return "\"\(escaped)\""
    }

    /// Text safe after `//` on one line.
    static func lineComment(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ")
    }
}
