/// One header (or trailer) field line, with its name and value as received or as they will be written.
public struct HTTPHeaderField: Sendable, Equatable {
    /// The field name, case kept as given (`Content-Type`).
    public var name: String
    /// The field value without surrounding whitespace. Bytes that are not UTF-8 read as ISO 8859-1 here.
    public var value: String {
        didSet { receivedValueBytes = nil }
    }
    /// The value's bytes as received when they are not UTF-8, so that they are written back unchanged rather
    /// than transcoded; cleared when `value` is set.
    public private(set) var receivedValueBytes: [UInt8]?

    /// A field named `name` with `value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// A field parsed from the wire (`isASCII`: the value's bytes are all ASCII): the value's bytes are kept when
    /// they are not UTF-8.
    init(name: String, valueBytes: UnsafeBufferPointer<UInt8>, isASCII: Bool) {
        self.name = name
        if isASCII {
            self.value = String(decoding: valueBytes, as: UTF8.self)
            return
        }
        let decoded = HTTPSyntax.decodeTextNotingUTF8(valueBytes)
        self.value = decoded.text
        if !decoded.isUTF8 { receivedValueBytes = Array(valueBytes) }
    }

    /// Whether the field is `nameBytes: valueBytes` exactly as received (same case, same bytes).
    func spells(name nameBytes: UnsafeBufferPointer<UInt8>, value valueBytes: UnsafeBufferPointer<UInt8>) -> Bool {
        receivedValueBytes == nil && Self.text(name, is: nameBytes) && Self.text(value, is: valueBytes)
    }

    private static func text(_ text: String, is bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.utf8.count == bytes.count else { return false }
        return text.utf8.withContiguousStorageIfAvailable { HTTPSyntax.sameBytes($0, bytes) } ?? false
    }
}

/// An ordered list of header fields that keeps the original order, case and repetitions; look-ups ignore ASCII case.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in the order they are received or will be written.
    public var fields: [HTTPHeaderField]

    /// Headers holding `fields` in that order.
    public init(_ fields: [HTTPHeaderField] = []) {
        self.fields = fields
    }

    /// Headers from a literal such as `["Host": "example.com", "Accept": "*/*"]`, kept in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { HTTPHeaderField(name: $0.0, value: $0.1) }
    }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeaderField]> {
        fields.makeIterator()
    }

    /// The number of field lines.
    public var count: Int { fields.count }

    /// Whether there are no fields at all.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field called `name` (any case), or nil.
    public func first(_ name: String) -> String? {
        guard let index = firstIndex(of: name) else { return nil }
        return fields[index].value
    }

    /// The values of all fields called `name` (any case), in order.
    public func values(_ name: String) -> [String] {
        var values: [String] = []
        for index in fields.indices where HTTPSyntax.equalsIgnoringASCIICase(fields[index].name, name) {
            values.append(fields[index].value)
        }
        return values
    }

    /// How many fields are called `name` (any case).
    public func count(named name: String) -> Int {
        fields.reduce(0) { $0 + (HTTPSyntax.equalsIgnoringASCIICase($1.name, name) ? 1 : 0) }
    }

    /// Whether any field is called `name` (any case).
    public func contains(_ name: String) -> Bool {
        firstIndex(of: name) != nil
    }

    /// Whether a field called `name` lists `token` (lowercase) among its comma-separated elements, in any case:
    /// `tokens(name).contains(token)` without building the list.
    public func containsToken(_ token: String, in name: String) -> Bool {
        var token = token
        return token.withUTF8 { token in
            for index in fields.indices where HTTPSyntax.equalsIgnoringASCIICase(fields[index].name, name) {
                var found = false
                HTTPSyntax.forEachListElement(of: fields[index].value) { element in
                    found =
                        element.count == token.count
                        && zip(element, token).allSatisfy { HTTPSyntax.lowercasedASCII($0) == $1 }
                    return !found
                }
                if found { return true }
            }
            return false
        }
    }

    /// The comma-separated elements of all fields called `name`, trimmed and lowercased, empty elements dropped:
    /// `Connection: keep-alive, Upgrade` gives `["keep-alive", "upgrade"]`.
    public func tokens(_ name: String) -> [String] {
        var result: [String] = []
        for index in fields.indices where HTTPSyntax.equalsIgnoringASCIICase(fields[index].name, name) {
            HTTPSyntax.forEachListElement(of: fields[index].value) { element in
                result.append(HTTPSyntax.asciiLowercased(bytes: element))
                return true
            }
        }
        return result
    }

    /// The position of the first field called `name` (any case). Fields are read in place by index, not copied out
    /// of the array as a `for` loop or a predicate would (each copy retains the name, the value and the raw bytes).
    func firstIndex(of name: String) -> Int? {
        for index in fields.indices where HTTPSyntax.equalsIgnoringASCIICase(fields[index].name, name) { return index }
        return nil
    }

    /// Appends a field after all existing ones.
    public mutating func add(name: String, value: String) {
        fields.append(HTTPHeaderField(name: name, value: value))
    }

    /// Removes every field called `name` (any case).
    public mutating func remove(_ name: String) {
        // Looked for first: removing nothing from fields shared with another head would still copy them. The fields
        // before the first match stay where they are; the ones after it move down over the removed ones.
        guard let first = firstIndex(of: name) else { return }
        var kept = first
        for index in fields.indices[(first + 1)...]
        where !HTTPSyntax.equalsIgnoringASCIICase(fields[index].name, name) {
            fields.swapAt(kept, index)
            kept += 1
        }
        fields.removeSubrange(kept...)
    }

    /// Sets the first field called `name` to `value` in place (keeping its position and spelling) and removes the others;
    /// appends a new field if there was none.
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let index = firstIndex(of: name) else {
            add(name: name, value: value)
            return
        }
        fields[index].value = value
        var position = fields.index(after: index)
        while position < fields.endIndex {
            if HTTPSyntax.equalsIgnoringASCIICase(fields[position].name, name) {
                fields.remove(at: position)
            } else {
                position += 1
            }
        }
    }
}
