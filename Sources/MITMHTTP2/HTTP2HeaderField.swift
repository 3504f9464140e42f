/// One HTTP/2 header field exactly as it travels: name and value as bytes (HTTP/2 names are lowercase;
/// values may hold bytes that are not UTF-8), plus whether HPACK must never index it.
public struct HTTP2HeaderField: Sendable, Equatable {
    /// The field name (`:method`, `content-type`).
    public var name: [UInt8]
    /// The field value.
    public var value: [UInt8]
    /// Sent as "literal never indexed" (a secret such as a cookie or a token); kept when forwarding.
    public var neverIndexed: Bool

    /// A field from raw bytes.
    public init(name: [UInt8], value: [UInt8], neverIndexed: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndexed = neverIndexed
    }

    /// A field from text.
    public init(_ name: String, _ value: String, neverIndexed: Bool = false) {
        self.init(name: Array(name.utf8), value: Array(value.utf8), neverIndexed: neverIndexed)
    }

    /// The name as text (bytes that are not UTF-8 become U+FFFD).
    public var nameText: String { HTTP2CommonBytes.nameText(name) }

    /// The value as text (bytes that are not UTF-8 become U+FFFD).
    public var valueText: String { String(decoding: value, as: UTF8.self) }

    /// Whether this is a pseudo-header (`:status`, `:path`, ...).
    public var isPseudo: Bool { name.first == UInt8(ascii: ":") }

    /// The size HTTP/2 counts against SETTINGS_MAX_HEADER_LIST_SIZE: name + value + 32 (RFC 9113 §6.5.2).
    public var listSize: Int { Self.listSize(nameLength: name.count, valueLength: value.count) }

    /// The list size of a field with a name and value this long.
    public static func listSize(nameLength: Int, valueLength: Int) -> Int { nameLength + valueLength + 32 }

    /// Whether the name is exactly `expected` (HTTP/2 names are lowercase), compared as bytes.
    public func nameIs(_ expected: StaticString) -> Bool { Self.bytes(name, are: expected) }

    /// Whether `bytes` are exactly the UTF-8 of `text`: a length check, then a plain byte loop (the generic
    /// `elementsEqual` over a `String.UTF8View` costs about 200 instructions a call, on every field of every head).
    public static func bytes(_ bytes: [UInt8], are text: StaticString) -> Bool {
        guard bytes.count == text.utf8CodeUnitCount else { return false }
        return bytes.withUnsafeBufferPointer { received in
            let expected = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            for index in received.indices where received[index] != expected[index] { return false }
            return true
        }
    }
}

extension Array where Element == HTTP2HeaderField {
    /// The value of the first field called `name` (exact, lowercase), as text.
    public func value(of name: StaticString) -> String? {
        valueBytes(of: name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The value of the first field called `name` (exact, lowercase), as received.
    public func valueBytes(of name: StaticString) -> [UInt8]? {
        for index in indices where self[index].nameIs(name) { return self[index].value }
        return nil
    }

    /// Whether `:status` is 1xx (nghttp2 lets through only three digits).
    var statusIsInformational: Bool {
        valueBytes(of: ":status")?.first == UInt8(ascii: "1")
    }
}
