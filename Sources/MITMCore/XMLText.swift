/// Escaping for the XML and HTML the proxy writes (JUnit reports, configuration profiles, its own pages).
package enum XMLText {
    /// Text safe inside XML (and HTML) text and attributes; characters XML 1.0 cannot carry become U+FFFD.
    package static func escaped(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "\n": escaped += "&#10;"
            case "\t", "\r": escaped += "&#\(scalar.value);"
            default:
                escaped.unicodeScalars.append(
                    scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF ? "\u{FFFD}" : scalar)
            }
        }
        return escaped
    }
}
