import Foundation

/// Compact JSON written straight into bytes, for the records written once per request (`--events` lines, HAR
/// entries): a `JSONEncoder` per record cost more than the rest of the recording together and let the writers fall
/// behind the traffic. Strings are escaped as `JSONEncoder` escapes them with `.withoutEscapingSlashes`.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the next member or element opens its container (no comma before it).
    private var opensContainer = true

    /// An empty writer.
    public init() {}

    /// Empties the writer for the next record, keeping its storage (a writer reused per record does not grow its
    /// buffer again for each one).
    public mutating func clear() {
        bytes.removeAll(keepingCapacity: true)
        opensContainer = true
    }

    /// Starts an object, as an element (or the top value).
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        opensContainer = true
    }

    /// Starts an object as the member `key`.
    public mutating func beginObject(_ key: StaticString) {
        name(key)
        bytes.append(UInt8(ascii: "{"))
        opensContainer = true
    }

    /// Ends the innermost object.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        opensContainer = false
    }

    /// Starts an array as the member `key`.
    public mutating func beginArray(_ key: StaticString) {
        name(key)
        bytes.append(UInt8(ascii: "["))
        opensContainer = true
    }

    /// Ends the innermost array.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        opensContainer = false
    }

    /// The member `key`: `value`; nothing when `value` is nil (as `JSONEncoder` leaves out nil optionals).
    public mutating func field(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        name(key)
        string(value)
    }

    /// The member `key`: `value`; nothing when nil.
    public mutating func field(_ key: StaticString, _ value: Int?) {
        guard let value else { return }
        name(key)
        integer(value)
    }

    /// The member `key`: `value`; nothing when nil.
    public mutating func field(_ key: StaticString, _ value: Double?) {
        guard let value else { return }
        name(key)
        number(value)
    }

    /// The member `key`: `value`; nothing when nil.
    public mutating func field(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        name(key)
        append(value ? "true" : "false")
    }

    /// The member `key`: an array of `values`; nothing when nil.
    public mutating func field(_ key: StaticString, _ values: [String]?) {
        guard let values else { return }
        beginArray(key)
        for value in values { element(value) }
        endArray()
    }

    /// The member `key`: `value` as `JSONEncoder` writes it (sorted keys, slashes unescaped); nothing when nil. For
    /// nested values of records that are rare (one per connection at most).
    public mutating func field(_ key: StaticString, encoding value: (some Encodable)?) {
        guard let value else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return }
        name(key)
        bytes.append(contentsOf: data)
    }

    /// Appends `json` as it is: bytes that are JSON already, or separate records (`,\n` between HAR entries).
    public mutating func raw(_ json: [UInt8]) {
        bytes.append(contentsOf: json)
    }

    /// Ends a record of a JSON Lines file (or separates HAR entries): a newline, outside any value.
    public mutating func newline() {
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A string element of the current array.
    public mutating func element(_ value: String) {
        separate()
        string(value)
    }

    private mutating func name(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func separate() {
        if opensContainer {
            opensContainer = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }

    private mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Whole numbers without a fraction (`-1`, `12`), others as Swift prints them (`0.123`), as `JSONEncoder` does;
    /// JSON has no infinity nor NaN: they are written as null.
    private mutating func number(_ value: Double) {
        guard value.isFinite else { return append("null") }
        if value == value.rounded(), abs(value) < 1e15 {
            integer(Int(value))
        } else {
            append(value.description)
        }
    }

    /// Decimal digits written in place (`String(value)` allocated a string per number).
    private mutating func integer(_ value: Int) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = value.magnitude
        var divisor: UInt = 1
        while rest / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: Array("u00".utf8))
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0x0F)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
