/// Why a TLS-looking byte stream is not a usable ClientHello.
struct ClientHelloMalformed: Error {
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

/// A bounds-checked cursor over ClientHello bytes; every read names the field so failures read well (the name is
/// only made when a read fails: a ClientHello is parsed for every new connection). It borrows the bytes (valid for
/// the parse only): readers of the nested vectors then cost no reference counting.
struct ClientHelloReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        self.position = 0
    }

    var isAtEnd: Bool { position == bytes.count }

    var remainingCount: Int { bytes.count - position }

    mutating func readUInt8(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> UInt8 {
        try require(1, field())
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readUInt16(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) -> UInt16 {
        try require(2, field())
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    mutating func readBytes(count: Int, _ field: @autoclosure () -> String) throws(ClientHelloMalformed)
        -> UnsafeBufferPointer<UInt8>
    {
        try require(count, field())
        let start = position
        position += count
        return UnsafeBufferPointer(rebasing: bytes[start..<position])
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

    func remainingBytes() -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[position...])
    }

    private func require(_ count: Int, _ field: @autoclosure () -> String) throws(ClientHelloMalformed) {
        guard count <= remainingCount else {
            throw ClientHelloMalformed("\(field()) needs \(count) bytes but only \(remainingCount) remain")
        }
    }

    func expectEnd(_ field: @autoclosure () -> String) throws(ClientHelloMalformed) {
        guard isAtEnd else {
            throw ClientHelloMalformed("\(remainingCount) unexpected bytes after \(field())")
        }
    }
}
