/// Values by HTTP/2 stream ID, in the order they were added. A connection has at most the concurrent-stream limit open
/// (100 here), so a scan of the IDs costs less than hashing one (SipHash, about 100 instructions a look-up).
public struct HTTP2StreamTable<Value>: Sequence {
    @usableFromInline var entries: [(key: Int32, value: Value)] = []

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { entries.isEmpty }

    @inlinable public var count: Int { entries.count }

    /// The values, in the order their streams were added.
    @inlinable public var values: [Value] { entries.map(\.value) }

    @inlinable func index(of streamID: Int32) -> Int? {
        var index = 0
        while index < entries.count {
            if entries[index].key == streamID { return index }
            index += 1
        }
        return nil
    }

    @inlinable public subscript(streamID: Int32) -> Value? {
        get { index(of: streamID).map { entries[$0].value } }
        set {
            switch (index(of: streamID), newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append((streamID, value))
            case (nil, nil): break
            }
        }
    }

    @inlinable public subscript(streamID: Int32, default value: @autoclosure () -> Value) -> Value {
        get { self[streamID] ?? value() }
        set { self[streamID] = newValue }
    }

    @inlinable @discardableResult
    public mutating func removeValue(forKey streamID: Int32) -> Value? {
        guard let index = index(of: streamID) else { return nil }
        return entries.remove(at: index).value
    }

    @inlinable public mutating func removeAll() { entries.removeAll() }

    @inlinable public func makeIterator() -> IndexingIterator<[(key: Int32, value: Value)]> { entries.makeIterator() }
}
