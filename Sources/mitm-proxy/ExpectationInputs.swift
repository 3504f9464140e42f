import ArgumentParser
import MITMCore
import MITMPins

/// The expectations of a run or a `verify`: `--expect` flags and `--expect-from` pin configurations, read
/// and combined (a flag for the same pattern wins over a file), with what to say about them before the run.
struct ExpectationInputs {
    /// The combined expectations.
    let merge: ExpectationMerge
    /// What each `--expect-from` file gave.
    let files: [PinExpectations]

    /// Parses `flags` and reads `files`; a bad flag or an unreadable file is a `ValidationError` naming it.
    init(flags: [String], files paths: [String]) throws {
        let parsed = try flags.map { text in
            do {
                return try Expectation(parsing: text)
            } catch {
                throw ValidationError(String(describing: error))
            }
        }
        files = try paths.map { path in
            do {
                return try PinExpectations.read(path)
            } catch {
                throw ValidationError("--expect-from: \(error)")
            }
        }
        merge = ExpectationMerge(flags: parsed, fromFiles: files.flatMap(\.expectations))
    }

    /// The expectations to check.
    var expectations: [Expectation] { merge.expectations }

    /// The expectations each file gave, one per line with its domain and note, then how flags changed them.
    var summary: [String] {
        var lines: [String] = []
        for file in files {
            lines.append("expectations from \(file.file):")
            for expectation in file.expectations {
                let note = expectation.source.note.map { ": \($0)" } ?? ""
                lines.append("  \(expectation) (domain \(expectation.source.domain ?? "?"))\(note)")
            }
        }
        lines += merge.overrides.map(\.description)
        return lines
    }

    /// Configuration mistakes and notes, said before the run.
    var warnings: [String] {
        files.flatMap { $0.warnings.map { "warning: \($0)" } + $0.notes.map { "note: \($0)" } }
    }
}
