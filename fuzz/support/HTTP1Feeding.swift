@testable import MITMCore

/// Feeds one input to an HTTP/1 parser whole and again in pieces, and traps when the two readings differ: a parser
/// whose result depends on how TCP happened to split the bytes is one a smuggler can steer.
enum HTTP1Feeding {
    /// What a parser made of a whole input: its events with adjacent body pieces joined, the bytes it kept after
    /// pausing, and the kind of error that stopped it.
    struct Reading: Equatable {
        var events: [HTTP1Event] = []
        var leftover: [UInt8] = []
        var error: HTTP1ParseError.Kind?
        var finished = false
    }

    /// The first byte of `input` picks the piece sizes and (for responses) the request methods; the rest is the message.
    static func check(_ input: [UInt8], role: HTTP1Parser.Role) {
        guard let control = input.first else { return }
        let message = Array(input.dropFirst())
        let methods = role == .response ? requestMethods(control) : []
        let whole = read(message, role: role, methods: methods, pieceSizes: [message.count])
        let pieces = read(message, role: role, methods: methods, pieceSizes: pieceSizes(control, total: message.count))
        if whole.error != nil || pieces.error != nil {
            precondition(whole.error == pieces.error, "whole input ended in \(String(describing: whole.error)), pieces in \(String(describing: pieces.error))")
        } else {
            precondition(whole == pieces, "reading the input whole and in pieces gave different results:\n\(whole)\n\(pieces)")
        }
    }

    static func read(_ message: [UInt8], role: HTTP1Parser.Role, methods: [String], pieceSizes: [Int]) -> Reading {
        var parser = HTTP1Parser(role: role, maxHeaderBytes: 2048)
        for method in methods { parser.expectResponse(toMethod: method) }
        var reading = Reading()
        var start = 0
        do throws(HTTP1ParseError) {
            for size in pieceSizes {
                let end = min(message.count, start + size)
                append(try parser.feed(message[start..<end]), to: &reading)
                start = end
            }
            append(try parser.finish(), to: &reading)
            reading.finished = true
        } catch {
            reading.error = error.kind
        }
        if parser.isPaused { reading.leftover = parser.takeBufferedBytes() }
        return reading
    }

    private static func append(_ events: [HTTP1Event], to reading: inout Reading) {
        for event in events {
            if case .body(let bytes) = event {
                precondition(!bytes.isEmpty, "the parser emitted an empty body event")
                if case .body(let previous) = reading.events.last {
                    reading.events[reading.events.count - 1] = .body(previous + bytes)
                    continue
                }
            }
            reading.events.append(event)
        }
    }

    private static func pieceSizes(_ control: UInt8, total: Int) -> [Int] {
        var state = UInt64(control) &* 0x9E37_79B9_7F4A_7C15 | 1
        let largest = 1 + Int(control % 97)
        var sizes: [Int] = []
        var covered = 0
        while covered < total {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            let size = 1 + Int(state % UInt64(largest))
            sizes.append(size)
            covered += size
        }
        return sizes
    }

    private static func requestMethods(_ control: UInt8) -> [String] {
        let names = ["GET", "HEAD", "CONNECT", "POST"]
        return (0..<4).map { names[Int(control >> (2 * $0)) & 3] }
    }
}
