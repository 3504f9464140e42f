@testable import MITMCore

/// The UTF-8 bytes of `text`, for writing wire data as string literals.
func wire(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// Runs a fresh parser over `input`, fed whole or in pieces of `pieceSize` bytes, then calls `finish()` when
/// `closing`. Adjacent body events are merged so results do not depend on how the input was split.
func parseEvents(
    _ role: HTTP1Parser.Role,
    _ input: [UInt8],
    pieceSize: Int? = nil,
    closing: Bool = false,
    methods: [String] = [],
    maxHeaderBytes: Int = 65_536
) throws(HTTP1ParseError) -> [HTTP1Event] {
    var parser = HTTP1Parser(role: role, maxHeaderBytes: maxHeaderBytes)
    for method in methods {
        parser.expectResponse(toMethod: method)
    }
    var events: [HTTP1Event] = []
    if let pieceSize {
        var start = 0
        while start < input.count {
            let end = min(start + pieceSize, input.count)
            events += try parser.feed(input[start..<end])
            start = end
        }
    } else {
        events += try parser.feed(input)
    }
    if closing {
        events += try parser.finish()
    }
    return mergingBodies(events)
}

/// The error `parseEvents` throws for the same arguments, or nil if it succeeds.
func parseFailure(
    _ role: HTTP1Parser.Role,
    _ input: [UInt8],
    pieceSize: Int? = nil,
    closing: Bool = false,
    methods: [String] = [],
    maxHeaderBytes: Int = 65_536
) -> HTTP1ParseError? {
    do throws(HTTP1ParseError) {
        _ = try parseEvents(
            role, input, pieceSize: pieceSize, closing: closing, methods: methods, maxHeaderBytes: maxHeaderBytes)
        return nil
    } catch {
        return error
    }
}

/// `events` with each run of adjacent body events joined into one.
func mergingBodies(_ events: [HTTP1Event]) -> [HTTP1Event] {
    var merged: [HTTP1Event] = []
    for event in events {
        if case .body(let more) = event, case .body(let earlier)? = merged.last {
            merged[merged.count - 1] = .body(earlier + more)
        } else {
            merged.append(event)
        }
    }
    return merged
}

/// A request head event.
func requestHead(
    _ method: String, _ target: String, _ headers: HTTPHeaders = [:], version: HTTPVersion = .http1_1,
    framing: HTTP1BodyFraming = .none
) -> HTTP1Event {
    .requestHead(HTTPRequestHead(method: method, target: target, version: version, headers: headers), framing: framing)
}

/// A response head event.
func responseHead(
    _ status: Int, _ reason: String, _ headers: HTTPHeaders = [:], version: HTTPVersion = .http1_1,
    framing: HTTP1BodyFraming = .none
) -> HTTP1Event {
    .responseHead(
        HTTPResponseHead(version: version, status: status, reason: reason, headers: headers), framing: framing)
}

/// A body event holding the UTF-8 bytes of `text`.
func body(_ text: String) -> HTTP1Event {
    .body(wire(text))
}

/// The end event of a message without trailers.
let end = HTTP1Event.end(trailers: nil)
