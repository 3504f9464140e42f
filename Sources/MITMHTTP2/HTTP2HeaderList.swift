import CNGHTTP2

extension Array where Element == HTTP2HeaderField {
    /// Calls `body` with the fields as an `nghttp2_nv` array that lives for the duration of the call
    /// (nghttp2's submit functions copy it).
    func withNameValuePairs<Result>(_ body: (UnsafePointer<nghttp2_nv>?, Int) -> Result) -> Result {
        let total = reduce(0) { $0 + $1.name.count + $1.value.count }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: Swift.max(1, total))
        defer { storage.deallocate() }
        var pairs: [nghttp2_nv] = []
        pairs.reserveCapacity(count)
        var cursor = storage
        for field in self {
            let name = cursor
            cursor = Self.copy(field.name, to: cursor)
            let value = cursor
            cursor = Self.copy(field.value, to: cursor)
            let flags = field.neverIndexed ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE
            pairs.append(
                nghttp2_nv(
                    name: name, value: value, namelen: field.name.count,
                    valuelen: field.value.count, flags: UInt8(flags.rawValue)))
        }
        return pairs.withUnsafeBufferPointer { body($0.baseAddress, $0.count) }
    }

    private static func copy(_ bytes: [UInt8], to destination: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<
        UInt8
    > {
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { destination.initialize(from: base, count: source.count) }
        }
        return destination + bytes.count
    }
}
