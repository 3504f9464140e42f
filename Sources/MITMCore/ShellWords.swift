import Foundation

/// A command line as a POSIX shell reads it back: each argument that holds anything a shell would split, expand or
/// interpret is put in single quotes (a single quote inside as `'\''`), so the line can be pasted to run it again.
public enum ShellWords {
    /// The arguments joined with spaces, each quoted when it needs to be.
    public static func quoted(_ arguments: [String]) -> String {
        arguments.map(quoted).joined(separator: " ")
    }

    /// One argument, quoted when it needs to be (the empty string is `''`).
    public static func quoted(_ argument: String) -> String {
        guard argument.isEmpty || argument.unicodeScalars.contains(where: { !isPlain($0) }) else { return argument }
        return "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Letters, digits and `@%+=:,./-_`, which no shell treats specially anywhere in a word.
    private static func isPlain(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "@", "%", "+", "=", ":", ",", ".", "/", "-", "_": true
        default: false
        }
    }
}
