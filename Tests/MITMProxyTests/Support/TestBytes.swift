/// Bulk test payloads, built with raw stores so debug builds make megabytes quickly.
enum TestBytes {
    /// `count` random bytes.
    static func random(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            var offset = 0
            while offset < count {
                let word = generator.next()
                let size = min(8, count - offset)
                withUnsafeBytes(of: word) {
                    raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: size)
                }
                offset += size
            }
            initialized = count
        }
    }
}
