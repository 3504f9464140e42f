import CMITMTLSShims
import COpenSSL

/// The OpenSSL error queue, read and emptied: one entry per line, outermost last.
public struct OpenSSLErrorStack: Error, CustomStringConvertible, Sendable, Equatable {
    /// Each queued error as OpenSSL renders it (`error:0A000086:SSL routines::certificate verify failed`).
    public let entries: [String]

    /// Drains the calling thread's OpenSSL error queue.
    public static func drain() -> OpenSSLErrorStack {
        var entries: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            entries.append(String(cBuffer: buffer))
        }
        return OpenSSLErrorStack(entries: entries)
    }

    /// The reason part of the most specific entry (`certificate verify failed`), or `unknown error`.
    public var reason: String {
        guard let last = entries.last else { return "unknown error" }
        let parts = last.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count >= 5 ? String(parts[4...].joined(separator: ":")) : last
    }

    public var description: String { entries.isEmpty ? "unknown OpenSSL error" : entries.joined(separator: "; ") }
}

/// An error from a certificate, key or TLS operation: what was being done, and OpenSSL's reason.
public struct TLSError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What the code was doing, e.g. `reading certificate /tmp/ca.pem`.
    public let operation: String
    /// OpenSSL's error stack at the time, possibly empty.
    public let stack: OpenSSLErrorStack

    /// Captures OpenSSL's error queue for a failed `operation`.
    public init(_ operation: String, stack: OpenSSLErrorStack = .drain()) {
        self.operation = operation
        self.stack = stack
    }

    public var description: String {
        stack.entries.isEmpty ? operation : "\(operation): \(stack.reason)"
    }
}
