extension ExchangeRecord {
    /// The record in as little memory as its data needs: parsers reserve room for more header fields than most
    /// messages have, and bodies grow in steps; a record kept in the flow list should not hold on to that room.
    mutating func compact() {
        request.parsedFrom = nil
        response?.parsedFrom = nil
        Self.dropSpareRoom(&request.headers.fields)
        if response != nil { Self.dropSpareRoom(&response!.headers.fields) }
        requestBody.shrinkToFit()
        responseBody.shrinkToFit()
    }

    /// Copies `fields` into an array of their size when they hold more than a little spare room (a parser gives a
    /// connection's later heads room for as many fields as its last head had; the allocator's rounding leaves a field
    /// or two).
    private static func dropSpareRoom(_ fields: inout [HTTPHeaderField]) {
        guard fields.capacity - fields.count > spareFieldsKept else { return }
        fields = fields.withUnsafeBufferPointer { Array($0) }
    }

    private static let spareFieldsKept = 2
}
