/// Checks the nesting of a property list before Foundation reads it: swift-corelibs-foundation recurses once per level
/// while bridging, so a binary plist whose containers refer back to themselves (a 364-byte file, found by fuzzing),
/// or one nested thousands deep, overflows the stack instead of failing. An Info.plist is a few levels deep.
enum PropertyListShape {
    /// The deepest nesting of arrays and dictionaries accepted.
    static let maximumDepth = 64

    /// Why `bytes` must not be handed to Foundation, or nil when its nesting is fine (or it is not a property list
    /// Foundation would recurse into: Foundation then reports its own error).
    static func problem(in bytes: [UInt8]) -> String? {
        if bytes.starts(with: Array("bplist00".utf8)) { return BinaryPlist(bytes)?.problem() }
        return xmlProblem(bytes)
    }

    /// Counts `<array>` and `<dict>` nesting in an XML property list (self-closing ones do not nest).
    private static func xmlProblem(_ bytes: [UInt8]) -> String? {
        var depth = 0
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                index += 1
                continue
            }
            var end = index + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: ">") { end += 1 }
            let tag = bytes[(index + 1)..<min(end, bytes.count)]
            let selfClosing = tag.last == UInt8(ascii: "/")
            if tag.starts(with: Array("array".utf8)) || tag.starts(with: Array("dict".utf8)), !selfClosing {
                depth += 1
                if depth > maximumDepth { return "its arrays and dictionaries nest more than \(maximumDepth) deep" }
            } else if tag.starts(with: Array("/array".utf8)) || tag.starts(with: Array("/dict".utf8)) {
                depth -= 1
            }
            index = end + 1
        }
        return nil
    }
}

/// The object table of a binary property list (`bplist00`), enough to walk its containers.
private struct BinaryPlist {
    let bytes: [UInt8]
    let offsets: [Int]
    let referenceSize: Int
    let top: Int

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8 + 32 else { return nil }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
              let count = Self.integer(bytes, at: trailer + 8, size: 8), let top = Self.integer(bytes, at: trailer + 16, size: 8),
              let tableStart = Self.integer(bytes, at: trailer + 24, size: 8),
              count > 0, count <= bytes.count, top < count, tableStart + count * offsetSize <= trailer else { return nil }
        var offsets: [Int] = []
        offsets.reserveCapacity(count)
        for index in 0..<count {
            guard let offset = Self.integer(bytes, at: tableStart + index * offsetSize, size: offsetSize), offset < trailer else { return nil }
            offsets.append(offset)
        }
        self.bytes = bytes
        self.offsets = offsets
        self.referenceSize = referenceSize
        self.top = top
    }

    /// A set or a keyed-archive UID (Info.plists hold neither, and Foundation traps bridging some sets, found by
    /// fuzzing), a container reached again while inside itself, or nesting beyond the limit, walked without recursion.
    func problem() -> String? {
        for offset in offsets {
            switch bytes[offset] >> 4 {
            case 0xC: return "it holds a set, which an Info.plist cannot"
            case 0x8: return "it holds a keyed-archive UID, which an Info.plist cannot"
            default: continue
            }
        }
        var inProgress = Set<Int>()
        var finished = Set<Int>()
        var stack: [(object: Int, children: [Int], next: Int)] = [(top, children(of: top), 0)]
        inProgress.insert(top)
        while let last = stack.last {
            guard last.next < last.children.count else {
                inProgress.remove(last.object)
                finished.insert(last.object)
                stack.removeLast()
                continue
            }
            stack[stack.count - 1].next += 1
            let child = last.children[last.next]
            guard child < offsets.count else { return nil }  // Foundation reports the bad reference itself
            if inProgress.contains(child) { return "a container contains itself" }
            if finished.contains(child) { continue }
            let grandchildren = children(of: child)
            guard !grandchildren.isEmpty else {
                finished.insert(child)
                continue
            }
            guard stack.count < PropertyListShape.maximumDepth else {
                return "its arrays and dictionaries nest more than \(PropertyListShape.maximumDepth) deep"
            }
            inProgress.insert(child)
            stack.append((child, grandchildren, 0))
        }
        return nil
    }

    /// The objects an array, set or dictionary refers to (keys and values); none for anything else.
    private func children(of object: Int) -> [Int] {
        let start = offsets[object]
        let marker = bytes[start]
        let kind = marker >> 4
        guard kind == 0xA || kind == 0xC || kind == 0xD else { return [] }
        var count = Int(marker & 0x0F)
        var cursor = start + 1
        if count == 0x0F {
            guard cursor < bytes.count, bytes[cursor] >> 4 == 0x1 else { return [] }
            let size = 1 << Int(bytes[cursor] & 0x0F)
            guard size <= 8, let value = Self.integer(bytes, at: cursor + 1, size: size) else { return [] }
            count = value
            cursor += 1 + size
        }
        let references = kind == 0xD ? count * 2 : count
        guard references <= bytes.count, cursor + references * referenceSize <= bytes.count else { return [] }
        return (0..<references).compactMap { Self.integer(bytes, at: cursor + $0 * referenceSize, size: referenceSize) }
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, when it fits in `Int`.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<(offset + size)] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }
}
