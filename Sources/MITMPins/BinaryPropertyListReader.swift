import Foundation

/// Reads a binary property list (`bplist00`): a header, the objects, an offset table giving where each object starts,
/// and a 32-byte trailer (offset size, reference size, object count, top object, where the offset table starts).
/// Every count, size, offset and reference is checked against the file before it is used; each object is read
/// once (a list whose containers share objects is read in linear time), a container reached again while it is
/// being read is refused, and so is nesting beyond `PropertyList.maximumDepth`.
struct BinaryPropertyListReader {
    /// More objects than any Info.plist holds.
    static let maximumObjects = 1 << 18

    private let bytes: [UInt8]
    private let offsetSize: Int
    private let referenceSize: Int
    private let objectCount: Int
    private let topObject: Int
    /// Where the offset table starts, which is where the objects end.
    private let objectsEnd: Int
    /// Each object read so far, with the height of its nesting (0 for anything but a container).
    private var finished: [Int: (value: PropertyList, height: Int)] = [:]
    private var inProgress: Set<Int> = []

    init(_ bytes: [UInt8]) throws(PropertyListError) {
        guard bytes.count >= 8 + 2 + 32 else {
            throw PropertyListError("it ends before a binary property list's trailer")
        }
        guard bytes.starts(with: Array("bplist00".utf8)) else {
            throw PropertyListError("it is a binary property list of another version than bplist00")
        }
        self.bytes = bytes
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
            throw PropertyListError(
                "its trailer gives offsets of \(offsetSize) bytes and references of \(referenceSize); each is 1 to 8")
        }
        let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
        let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
        let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
        guard (1...UInt64(Self.maximumObjects)).contains(count) else {
            throw PropertyListError(
                "its trailer counts \(count) objects; a property list holds 1 to \(Self.maximumObjects)")
        }
        guard top < count else {
            throw PropertyListError("its top object is \(top), but it holds only \(count) objects")
        }
        guard table >= 9, table <= UInt64(trailer), UInt64(trailer) - table >= count * UInt64(offsetSize) else {
            throw PropertyListError(
                "its offset table (at byte \(table), \(count) offsets of \(offsetSize) bytes) does not fit "
                    + "between the objects and the trailer")
        }
        objectCount = Int(count)
        topObject = Int(top)
        objectsEnd = Int(table)
    }

    /// The top object, and everything it holds.
    mutating func root() throws(PropertyListError) -> PropertyList {
        try object(topObject, depth: 0).value
    }

    /// Object `index`, met `depth` containers deep, and its height.
    private mutating func object(_ index: Int, depth: Int) throws(PropertyListError) -> (
        value: PropertyList, height: Int
    ) {
        if let known = finished[index] {
            guard depth + known.height <= PropertyList.maximumDepth else { throw tooDeep }
            return known
        }
        let offset = Self.unsigned(bytes, at: objectsEnd + index * offsetSize, size: offsetSize)
        guard offset >= 8, offset < UInt64(objectsEnd) else {
            throw PropertyListError(
                "object \(index) starts at byte \(offset), outside the objects (bytes 8 to \(objectsEnd - 1))")
        }
        let start = Int(offset)
        let marker = bytes[start]
        let value: PropertyList
        var height = 0
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x08: value = .boolean(false)
            case 0x09: value = .boolean(true)
            default:
                throw PropertyListError(
                    "object \(index) at byte \(start) is a null or fill byte (0x\(hex(marker))), which an Info.plist holds none of"
                )
            }
        case 0x1:
            value = .integer(try integer(marker, at: start, object: index))
        case 0x2:
            let size = 1 << Int(marker & 0x0F)
            guard size == 4 || size == 8 else {
                throw PropertyListError(
                    "object \(index) at byte \(start) is a real number of \(size) bytes; 4 or 8 are read")
            }
            let bits = try self.bits(at: start + 1, size: size, object: index)
            value = .real(size == 4 ? Double(Float(bitPattern: UInt32(bits))) : Double(bitPattern: bits))
        case 0x3:
            guard marker == 0x33 else {
                throw PropertyListError("object \(index) at byte \(start) has the unknown type 0x\(hex(marker))")
            }
            value = .date(
                Date(
                    timeIntervalSinceReferenceDate: Double(bitPattern: try bits(at: start + 1, size: 8, object: index)))
            )
        case 0x4:
            let (count, body) = try length(marker, at: start, object: index)
            value = .data(Array(try slice(body, count, object: index)))
        case 0x5:
            let (count, body) = try length(marker, at: start, object: index)
            let characters = try slice(body, count, object: index)
            guard characters.allSatisfy({ $0 < 0x80 }) else {
                throw PropertyListError("object \(index) at byte \(start) is an ASCII string with a byte over 0x7F")
            }
            value = .string(String(decoding: characters, as: UTF8.self))
        case 0x6:
            let (count, body) = try length(marker, at: start, object: index)
            guard count <= (objectsEnd - body) / 2 else { throw overrun(index, start) }
            let units = try slice(body, count * 2, object: index)
            let utf16 = stride(from: units.startIndex, to: units.endIndex, by: 2).map {
                UInt16(units[$0]) << 8 | UInt16(units[$0 + 1])
            }
            guard let text = String(validating: utf16, as: UTF16.self) else {
                throw PropertyListError("object \(index) at byte \(start) is a UTF-16 string that is not valid UTF-16")
            }
            value = .string(text)
        case 0x8:
            throw PropertyListError(
                "object \(index) at byte \(start) is a keyed-archive UID, which an Info.plist cannot hold")
        case 0xA:
            let children = try container(index, at: start, marker: marker, depth: depth)
            value = .array(children.values)
            height = children.height
        case 0xC:
            throw PropertyListError("object \(index) at byte \(start) is a set, which an Info.plist cannot hold")
        case 0xD:
            (value, height) = try dictionary(index, at: start, marker: marker, depth: depth)
        default:
            throw PropertyListError("object \(index) at byte \(start) has the unknown type 0x\(hex(marker))")
        }
        finished[index] = (value, height)
        return (value, height)
    }

    private mutating func dictionary(_ index: Int, at start: Int, marker: UInt8, depth: Int) throws(PropertyListError)
        -> (PropertyList, height: Int)
    {
        let (keys, values, height) = try container(index, at: start, marker: marker, depth: depth)
        var entries: [String: PropertyList] = [:]
        for (key, value) in zip(keys, values) {
            guard case .string(let name) = key else {
                throw PropertyListError(
                    "the dictionary at byte \(start) has \(key.kindName) as a key; keys are strings")
            }
            guard entries.updateValue(value, forKey: name) == nil else {
                throw PropertyListError("the dictionary at byte \(start) has the key \"\(name)\" twice")
            }
        }
        return (.dictionary(entries), height)
    }

    /// The objects an array refers to (`keys` empty), or a dictionary's keys and values; the container's height.
    private mutating func container(_ index: Int, at start: Int, marker: UInt8, depth: Int) throws(PropertyListError)
        -> (keys: [PropertyList], values: [PropertyList], height: Int)
    {
        guard depth < PropertyList.maximumDepth else { throw tooDeep }
        guard inProgress.insert(index).inserted else {
            throw PropertyListError("a container contains itself (object \(index) at byte \(start))")
        }
        defer { inProgress.remove(index) }
        let isDictionary = marker >> 4 == 0xD
        let (count, body) = try length(marker, at: start, object: index)
        let references = isDictionary ? count * 2 : count
        guard references <= (objectsEnd - body) / referenceSize else { throw overrun(index, start) }
        var children: [PropertyList] = []
        children.reserveCapacity(references)
        var height = 1
        for position in 0..<references {
            let reference = Self.unsigned(bytes, at: body + position * referenceSize, size: referenceSize)
            guard reference < UInt64(objectCount) else {
                throw PropertyListError(
                    "the container at byte \(start) refers to object \(reference), but there are only \(objectCount)")
            }
            let child = try object(Int(reference), depth: depth + 1)
            children.append(child.value)
            height = max(height, child.height + 1)
        }
        return isDictionary ? (Array(children[..<count]), Array(children[count...]), height) : ([], children, height)
    }

    /// The element count of a data, string or container object and where its body starts: the marker's low nibble,
    /// or, when that is 0xF, the integer object that follows it.
    private func length(_ marker: UInt8, at start: Int, object index: Int) throws(PropertyListError) -> (
        count: Int, body: Int
    ) {
        let nibble = Int(marker & 0x0F)
        guard nibble == 0x0F else { return (nibble, start + 1) }
        guard start + 1 < objectsEnd, bytes[start + 1] >> 4 == 0x1, bytes[start + 1] & 0x0F <= 3 else {
            throw PropertyListError("object \(index) at byte \(start) has a malformed length")
        }
        let size = 1 << Int(bytes[start + 1] & 0x0F)
        let count = try bits(at: start + 2, size: size, object: index)
        guard count <= UInt64(objectsEnd) else { throw overrun(index, start) }
        return (Int(count), start + 2 + size)
    }

    /// An integer object: 1, 2 and 4 bytes unsigned, 8 and 16 bytes signed, as CoreFoundation writes them.
    private func integer(_ marker: UInt8, at start: Int, object index: Int) throws(PropertyListError) -> Int128 {
        let exponent = Int(marker & 0x0F)
        guard exponent <= 4 else {
            throw PropertyListError(
                "object \(index) at byte \(start) is an integer of \(1 << exponent) bytes; 1 to 16 are read")
        }
        let size = 1 << exponent
        guard start + 1 + size <= objectsEnd else { throw overrun(index, start) }
        var value: UInt128 = 0
        for byte in bytes[(start + 1)..<(start + 1 + size)] { value = value << 8 | UInt128(byte) }
        switch size {
        case 8: return Int128(Int64(bitPattern: UInt64(value)))
        case 16: return Int128(bitPattern: value)
        default: return Int128(value)
        }
    }

    /// `size` bytes at `offset` inside the objects, big-endian.
    private func bits(at offset: Int, size: Int, object index: Int) throws(PropertyListError) -> UInt64 {
        guard offset + size <= objectsEnd else { throw overrun(index, offset) }
        return Self.unsigned(bytes, at: offset, size: size)
    }

    private func slice(_ start: Int, _ count: Int, object index: Int) throws(PropertyListError) -> ArraySlice<UInt8> {
        guard count <= objectsEnd - start else { throw overrun(index, start) }
        return bytes[start..<(start + count)]
    }

    private var tooDeep: PropertyListError {
        PropertyListError("its arrays and dictionaries nest more than \(PropertyList.maximumDepth) deep")
    }

    private func overrun(_ index: Int, _ start: Int) -> PropertyListError {
        PropertyListError("object \(index) at byte \(start) runs past the end of the objects")
    }

    /// A big-endian unsigned integer of `size` (at most 8) bytes at `offset`, which the caller checked is in range.
    private static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        bytes[offset..<(offset + size)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

private func hex(_ byte: UInt8) -> String {
    String(byte, radix: 16, uppercase: true)
}
