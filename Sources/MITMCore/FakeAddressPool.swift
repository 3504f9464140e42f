/// Addresses handed out for names by the capture's DNS responder, from the benchmarking range 198.18.0.0/15 (RFC 2544,
/// never routed on the internet), so that a connection to one tells which name the client looked up, with or without
/// SNI. One name keeps its address; past `capacity` names the oldest address is given to the next new name.
public struct FakeAddressPool: Sendable {
    private var addressOfName: [String: UInt32] = [:]
    private var nameOfAddress: [UInt32: String] = [:]
    private var next: UInt32 = 0
    /// How many names hold an address at once.
    public let capacity: UInt32

    /// The first address: 198.18.0.1 (198.18.0.0 is skipped as a network address some stacks refuse).
    private static let base: UInt32 = 198 << 24 | 18 << 16 | 1

    /// A pool of at most `capacity` names (the /15 holds 131,070).
    public init(capacity: UInt32 = 131_070) {
        self.capacity = min(max(capacity, 1), 131_070)
    }

    /// The address for `name` (lower-cased), handed out now if it had none.
    public mutating func address(for name: String) -> [UInt8] {
        let key = name.lowercased()
        if let offset = addressOfName[key] { return Self.bytes(offset) }
        let offset = next
        next = (next + 1) % capacity
        if let previous = nameOfAddress[offset] { addressOfName[previous] = nil }
        addressOfName[key] = offset
        nameOfAddress[offset] = key
        return Self.bytes(offset)
    }

    /// The name that `address` (dotted quad) was handed out for, if it was.
    public func name(for address: String) -> String? {
        guard let ip = IPAddress(address)?.unmappedIPv4 ?? IPAddress(address), ip.bytes.count == 4 else { return nil }
        let value = ip.bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard value >= Self.base else { return nil }
        return nameOfAddress[value - Self.base]
    }

    private static func bytes(_ offset: UInt32) -> [UInt8] {
        let value = base + offset
        return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
