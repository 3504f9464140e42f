import MITMCore
import MITMHTTP2

/// Translations between HTTP/2 field lists and the HTTP/1-shaped heads the records, the console and
/// HAR use: pseudo-headers become method, target and Host; the version is HTTP/2.0.
enum HTTP2Heads {
    /// The request head a stream's header block describes.
    static func request(_ fields: [HTTP2HeaderField]) -> HTTPRequestHead {
        var method = ""
        var path = ""
        var authority: String?
        var extendedProtocol: String?
        var headers = HTTPHeaders()
        // Room for the regular fields and a `host` made from `:authority`, no more: the flow list keeps the record's
        // fields as they are when they hold no more than a little spare room (`ExchangeRecord.compact`).
        headers.fields.reserveCapacity(fields.reduce(1) { $1.isPseudo ? $0 : $0 + 1 })
        var hasHost = false
        // Names are compared as bytes: only the fields a head keeps become text.
        for index in fields.indices {
            let name = fields[index].name
            guard fields[index].isPseudo else {
                hasHost = hasHost || isHost(name)
                headers.add(name: fields[index].nameText, value: fields[index].valueText)
                continue
            }
            if HTTP2HeaderField.bytes(name, are: ":method") {
                method = fields[index].valueText
            } else if HTTP2HeaderField.bytes(name, are: ":path") {
                path = fields[index].valueText
            } else if HTTP2HeaderField.bytes(name, are: ":authority") {
                authority = fields[index].valueText
            } else if HTTP2HeaderField.bytes(name, are: ":protocol") {
                extendedProtocol = fields[index].valueText
            }
        }
        if let authority, !hasHost {
            headers.fields.insert(HTTPHeaderField(name: "host", value: authority), at: 0)
        }
        // A plain CONNECT names a host and port; an extended CONNECT (RFC 8441, `:protocol`) has a path like a GET.
        let target = method == "CONNECT" && extendedProtocol == nil ? authority ?? "" : path
        return HTTPRequestHead(method: method, target: target, version: .http2, headers: headers)
    }

    private static let host = Array("host".utf8)

    /// Whether a field name is `host` in any case (what `HTTPHeaders.contains("host")` matches).
    private static func isHost(_ name: [UInt8]) -> Bool {
        name.count == 4 && name.indices.allSatisfy { name[$0] | 0x20 == host[$0] }
    }

    /// The protocol an extended CONNECT asks for (RFC 8441 `:protocol`, e.g. `websocket`), or nil.
    static func extendedConnectProtocol(_ fields: [HTTP2HeaderField]) -> String? {
        guard let method = fields.valueBytes(of: ":method"), HTTP2HeaderField.bytes(method, are: "CONNECT") else {
            return nil
        }
        return fields.value(of: ":protocol")
    }

    /// The response head a header block describes (HTTP/2 has no reason phrase).
    static func response(_ fields: [HTTP2HeaderField]) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.fields.reserveCapacity(fields.count)
        var status = 0
        for index in fields.indices {
            if fields[index].nameIs(":status") {
                status = statusCode(fields[index].value)
            } else if !fields[index].isPseudo {
                headers.add(name: fields[index].nameText, value: fields[index].valueText)
            }
        }
        return HTTPResponseHead(version: .http2, status: status, reason: "", headers: headers)
    }

    /// A `:status` value as a number, 0 when it is not one (three digits, as nghttp2 checks, are read directly).
    private static func statusCode(_ value: [UInt8]) -> Int {
        guard value.count == 3, value.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return Int(String(decoding: value, as: UTF8.self)) ?? 0
        }
        return value.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// A head the proxy answers with itself, as HTTP/2 fields (names lowercased, no connection options).
    static func fields(_ head: HTTPResponseHead) -> [HTTP2HeaderField] {
        var fields = [HTTP2HeaderField(":status", String(head.status))]
        for field in head.headers where field.name.lowercased() != "connection" {
            fields.append(HTTP2HeaderField(field.name.lowercased(), field.value))
        }
        return fields
    }
}
