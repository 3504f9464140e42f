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
        for field in fields {
            switch field.nameText {
            case ":method": method = field.valueText
            case ":path": path = field.valueText
            case ":authority": authority = field.valueText
            case ":protocol": extendedProtocol = field.valueText
            default:
                if !field.isPseudo { headers.add(name: field.nameText, value: field.valueText) }
            }
        }
        if let authority, !headers.contains("host") {
            headers.fields.insert(HTTPHeaderField(name: "host", value: authority), at: 0)
        }
        // A plain CONNECT names a host and port; an extended CONNECT (RFC 8441, `:protocol`) has a path like a GET.
        let target = method == "CONNECT" && extendedProtocol == nil ? authority ?? "" : path
        return HTTPRequestHead(method: method, target: target, version: .http2, headers: headers)
    }

    /// The protocol an extended CONNECT asks for (RFC 8441 `:protocol`, e.g. `websocket`), or nil.
    static func extendedConnectProtocol(_ fields: [HTTP2HeaderField]) -> String? {
        guard fields.value(of: ":method") == "CONNECT" else { return nil }
        return fields.value(of: ":protocol")
    }

    /// The response head a header block describes (HTTP/2 has no reason phrase).
    static func response(_ fields: [HTTP2HeaderField]) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        var status = 0
        for field in fields {
            if field.nameText == ":status" {
                status = Int(field.valueText) ?? 0
            } else if !field.isPseudo {
                headers.add(name: field.nameText, value: field.valueText)
            }
        }
        return HTTPResponseHead(version: .http2, status: status, reason: "", headers: headers)
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
