/// Why a TLS-looking byte stream is not a usable ClientHello.
struct ClientHelloMalformed: Error {
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

/// A bounds-checked cursor over ClientHello bytes; every read names the field so failures read well (the name is
/// only made when a read fails: a ClientHello is parsed for every new connection).
struct ClientHelloReader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    var isAtEnd: Bool { position == bytes.endIndex }

    var remainingCount: Int { bytes.endIndex - position }

    mutating func readUInt8(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> UInt8 {
        try readBytes(count: 1, field()).first!
    }

    mutating func readUInt16(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> UInt16 {
        let raw = try readBytes(count: 2, field())
        return UInt16(raw[raw.startIndex]) << 8 | UInt16(raw[raw.startIndex + 1])
    }

    mutating func readBytes(count: Int, _ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> ArraySlice<UInt8> {
        guard count <= remainingCount else {
            throw ClientHelloMalformed("\(field()) needs \(count) bytes but only \(remainingCount) remain")
        }
        let start = position
        position += count
        return bytes[start..<position]
    }

    /// Reads a vector with a one-byte length prefix and returns a reader over its contents.
    mutating func readVector8(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> ClientHelloReader {
        let length = Int(try readUInt8("\(field()) length"))
        return ClientHelloReader(try readBytes(count: length, field()))
    }

    /// Reads a vector with a two-byte length prefix and returns a reader over its contents.
    mutating func readVector16(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> ClientHelloReader {
        let length = Int(try readUInt16("\(field()) length"))
        return ClientHelloReader(try readBytes(count: length, field()))
    }

    func remainingBytes() -> ArraySlice<UInt8> {
        bytes[position...]
    }

    func expectEnd(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) {
        guard isAtEnd else {
            throw ClientHelloMalformed("\(remainingCount) unexpected bytes after \(field())")
        }
    }
}
