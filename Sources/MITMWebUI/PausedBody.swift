import MITMCore

/// The body of an exchange paused at a breakpoint, as the web UI shows it: its text when the web UI may edit it, or why
/// it may not. Only a complete body up to `editLimit` that is UTF-8 text is editable: one still streaming would have
/// to be held whole, and binary bytes do not survive a text field.
package struct PausedBody: Encodable, Sendable, Equatable {
    /// The body's text, when it can be edited.
    package let text: String?
    /// Its size in bytes, when it is complete.
    package let size: Int?
    /// Why it cannot be edited, when it cannot.
    package let notEditable: String?

    /// The largest body the web UI edits.
    package static let editLimit = 1 << 20

    /// A body whose bytes are `bytes` when it is complete (nil while it still streams).
    package static func of(_ bytes: [UInt8]?) -> PausedBody {
        guard let bytes else {
            return PausedBody(
                text: nil, size: nil,
                notEditable: "the body is still streaming (only a body that arrived whole "
                    + "with its head can be edited)")
        }
        guard bytes.count <= editLimit else {
            return PausedBody(
                text: nil, size: bytes.count,
                notEditable: "the body is \(ByteCountText.format(bytes.count)), larger "
                    + "than the \(ByteCountText.format(editLimit)) that can be edited")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return PausedBody(text: nil, size: bytes.count, notEditable: "the body is binary (not UTF-8 text)")
        }
        return PausedBody(text: text, size: bytes.count, notEditable: nil)
    }

    /// A body that is not there to edit: `reason` says why (a 101, a HEAD's response, a WebSocket).
    package static func none(_ reason: String) -> PausedBody { PausedBody(text: nil, size: nil, notEditable: reason) }
}
