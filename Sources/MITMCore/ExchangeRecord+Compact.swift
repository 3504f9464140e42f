extension ExchangeRecord {
    /// The record in as little memory as its data needs: parsers reserve room for more header fields than most
    /// messages have, and bodies grow in steps; a record kept in the flow list should not hold on to that room.
    mutating func compact() {
        request.parsedFrom = nil
        response?.parsedFrom = nil
        request.headers.fields = request.headers.fields.withUnsafeBufferPointer { Array($0) }
        if response != nil {
            response!.headers.fields = response!.headers.fields.withUnsafeBufferPointer { Array($0) }
        }
        requestBody.shrinkToFit()
        responseBody.shrinkToFit()
    }
}
