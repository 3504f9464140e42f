import Foundation

/// A file of host patterns (`--ignore-hosts @FILE`, `--intercept-hosts @FILE`): one pattern per line, the
/// `--expect` syntax; `#` starts a comment (a pattern cannot contain one), blank lines are skipped.
package enum HostPatternFile {
    /// The patterns in `text`, read from `file` (named in errors). A file without a single pattern is an error:
    /// as an intercept list it would silently mean "every host".
    package static func parse(_ text: String, file: String) throws(HostPatternFileError) -> [HostPattern] {
        var patterns: [HostPattern] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let content = line.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            guard !content.isEmpty else { continue }
            do {
                patterns.append(try HostPattern(content))
            } catch {
                throw HostPatternFileError(file: file, line: index + 1, reason: error.description)
            }
        }
        guard !patterns.isEmpty else {
            throw HostPatternFileError(file: file, line: nil, reason: "it holds no host pattern")
        }
        return patterns
    }
}

/// Why a host pattern file was rejected, naming the file and the line.
package struct HostPatternFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file.
    package let file: String
    /// The 1-based line, when one line is at fault.
    package let line: Int?
    /// What is wrong.
    package let reason: String

    package var description: String {
        "\(file)\(line.map { " line \($0)" } ?? ""): \(reason)"
    }
}
