import MITMCore

/// A request's `Range: bytes=...` against a body of known size (RFC 9110 §14): one range is served as
/// 206, several are answered with the whole body (allowed), and one that cannot be satisfied gets 416.
package enum ByteRange: Sendable, Equatable {
    /// No usable range: send everything with 200.
    case whole
    /// Send `offset ..< offset + length` with 206.
    case partial(offset: Int, length: Int)
    /// 416, with `Content-Range: bytes */size`.
    case unsatisfiable

    /// The range `header` asks of a body of `size` bytes; `header` nil or not understood means the whole body.
    package static func of(_ header: String?, size: Int) -> ByteRange {
        guard let header else { return .whole }
        let text = header.trimmingSpaces
        guard text.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = text.dropFirst(6).trimmingSpaces
        guard !spec.contains(",") else { return .whole }
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingSpaces }
        guard parts.count == 2 else { return .whole }
        let first = parts[0].isEmpty ? nil : decimal(parts[0])
        let last = parts[1].isEmpty ? nil : decimal(parts[1])
        if !parts[0].isEmpty && first == nil || !parts[1].isEmpty && last == nil { return .whole }
        switch (first, last) {
        case (nil, nil):
            return .whole
        case (nil, let suffix?):
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            let length = min(suffix, size)
            return .partial(offset: size - length, length: length)
        case (let start?, let end):
            guard start < size else { return .unsatisfiable }
            if let end, end < start { return .whole }
            let stop = min(end ?? (size - 1), size - 1)
            return .partial(offset: start, length: stop - start + 1)
        }
    }

    private static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), text.utf8.count <= 18 else {
            return nil
        }
        return Int(text)
    }
}
