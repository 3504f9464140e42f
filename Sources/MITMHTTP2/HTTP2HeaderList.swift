import CNGHTTP2

extension Array where Element == HTTP2HeaderField {
    /// Calls `body` with the fields as an `nghttp2_nv` array that lives for the duration of the call
    /// (nghttp2's submit functions copy it).
    func withNameValuePairs<Result>(_ body: (UnsafePointer<nghttp2_nv>?, Int) -> Result) -> Result {
        let total = reduce(0) { $0 + $1.name.count + $1.value.count }
        // On the stack when small, as a head nearly always is: two allocations fewer for every head submitted.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Swift.max(1, total)) { storage in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: Swift.max(1, count)) { pairs in
                var cursor = storage.baseAddress!
                for index in indices {
                    let name = cursor
                    cursor = Self.copy(self[index].name, to: cursor)
                    let value = cursor
                    cursor = Self.copy(self[index].value, to: cursor)
                    let flags = self[index].neverIndexed ? NGHTTP2_NV_FLAG_NO_INDEX : NGHTTP2_NV_FLAG_NONE
                    pairs.initializeElement(
                        at: index,
                        to: nghttp2_nv(
                            name: name, value: value, namelen: self[index].name.count,
                            valuelen: self[index].value.count, flags: UInt8(flags.rawValue)))
                }
                return body(UnsafePointer(pairs.baseAddress), count)
            }
        }
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
