/// The one DNS question a stub resolver asks (RFC 1035 4.1), read from a UDP query, and the answers the capture's DNS
/// responder gives it. Sans-IO: bytes in, bytes out. Bounded: a query longer than 512 bytes, with more or fewer than
/// one question, or with a compressed or overlong name is not answered (nil) or answered FORMERR; never a crash.
public struct DNSQuery: Sendable, Equatable {
    /// The query's id, echoed in the answer.
    public let id: UInt16
    /// The header's flags word as sent (opcode, RD).
    public let flags: UInt16
    /// The name asked for, lower-cased, without the final dot (`api.example.com`).
    public let name: String
    /// `name` when it is a host name the proxy may dial and name a certificate for (`HostName.validate`), nil otherwise:
    /// a label with a dot in it (`a.b` as one label reads like two), a byte outside ASCII, an empty name.
    public let hostName: String?
    /// The record type: 1 is A, 28 AAAA.
    public let type: UInt16
    /// The record class (1 is IN).
    public let recordClass: UInt16
    /// The question's bytes as sent (name, type, class), echoed in the answer.
    let question: ArraySlice<UInt8>

    /// Record types the responder tells apart.
    public static let typeA: UInt16 = 1
    public static let typeAAAA: UInt16 = 28

    /// Why a datagram is not a query the responder answers.
    public enum Problem: Error, Equatable, Sendable {
        /// Too short for a header, or a response: dropped without an answer.
        case unanswerable
        /// A header was read but not its question: answered FORMERR (RFC 1035 4.1.1, code 1).
        case malformed(id: UInt16, flags: UInt16)
        /// A query other than a standard one (opcode not 0): answered with RCODE 4 (RFC 1035 4.1.1: the server does
        /// not support that kind of query).
        case unsupportedOpcode(id: UInt16, flags: UInt16)
    }

    /// The largest query read: the classic UDP limit.
    public static let maximumSize = 512

    /// Reads a query datagram.
    public static func parse(_ datagram: [UInt8]) throws(Problem) -> DNSQuery {
        guard datagram.count >= 12, datagram.count <= maximumSize else { throw .unanswerable }
        let id = UInt16(datagram[0]) << 8 | UInt16(datagram[1])
        let flags = UInt16(datagram[2]) << 8 | UInt16(datagram[3])
        guard flags & 0x8000 == 0 else { throw .unanswerable }
        guard (flags >> 11) & 0xF == 0 else { throw .unsupportedOpcode(id: id, flags: flags) }
        let questions = UInt16(datagram[4]) << 8 | UInt16(datagram[5])
        guard questions == 1 else { throw .malformed(id: id, flags: flags) }
        var index = 12
        var labels: [String] = []
        var nameLength = 0
        var labelHasDot = false
        while true {
            guard index < datagram.count else { throw .malformed(id: id, flags: flags) }
            let length = Int(datagram[index])
            index += 1
            if length == 0 { break }
            // 0xC0: a compression pointer, which a question never needs; 0x40/0x80: reserved label types.
            guard length <= 63, index + length <= datagram.count else { throw .malformed(id: id, flags: flags) }
            nameLength += length + 1
            guard nameLength <= 255 else { throw .malformed(id: id, flags: flags) }
            labelHasDot = labelHasDot || datagram[index..<index + length].contains(UInt8(ascii: "."))
            labels.append(String(decoding: datagram[index..<index + length], as: UTF8.self).lowercased())
            index += length
        }
        guard index + 4 <= datagram.count else { throw .malformed(id: id, flags: flags) }
        let type = UInt16(datagram[index]) << 8 | UInt16(datagram[index + 1])
        let recordClass = UInt16(datagram[index + 2]) << 8 | UInt16(datagram[index + 3])
        let name = labels.joined(separator: ".")
        return DNSQuery(
            id: id, flags: flags, name: name, hostName: labelHasDot ? nil : HostName.validate(name), type: type,
            recordClass: recordClass, question: datagram[12..<index + 4])
    }

    /// The answer: `address` (4 bytes) as the one A record when given, else no record (NOERROR, an empty answer), with
    /// a time to live of `ttl` seconds.
    public func answer(address: [UInt8]?, ttl: UInt32 = 60) -> [UInt8] {
        var bytes = Self.header(id: id, flags: flags, code: 0, answers: address == nil ? 0 : 1)
        bytes += question
        if let address {
            // The name: a pointer to the question's, at offset 12.
            bytes += [0xC0, 12, 0, UInt8(Self.typeA), 0, 1]
            bytes += [UInt8(ttl >> 24), UInt8(ttl >> 16 & 0xFF), UInt8(ttl >> 8 & 0xFF), UInt8(ttl & 0xFF)]
            bytes += [0, UInt8(address.count)] + address
        }
        return bytes
    }

    /// The answer to a query that could not be answered as asked (`malformed`: FORMERR, `unsupportedOpcode`: RCODE 4);
    /// nil for a datagram that gets none.
    public static func answer(to problem: Problem) -> [UInt8]? {
        switch problem {
        case .unanswerable: nil
        case .malformed(let id, let flags): header(id: id, flags: flags, code: 1, answers: 0, questions: 0)
        case .unsupportedOpcode(let id, let flags): header(id: id, flags: flags, code: 4, answers: 0, questions: 0)
        }
    }

    /// A response header: QR set, the query's opcode and RD kept, RA set, `code` as RCODE.
    private static func header(id: UInt16, flags: UInt16, code: UInt16, answers: UInt16, questions: UInt16 = 1)
        -> [UInt8]
    {
        let responseFlags = 0x8000 | (flags & 0x7900) | 0x0080 | code
        return [
            UInt8(id >> 8), UInt8(id & 0xFF), UInt8(responseFlags >> 8), UInt8(responseFlags & 0xFF),
            UInt8(questions >> 8), UInt8(questions & 0xFF), UInt8(answers >> 8), UInt8(answers & 0xFF), 0, 0, 0, 0,
        ]
    }
}
