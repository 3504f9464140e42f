/// HAR entries as JSON written by hand, in the members' declared order (as `JSONEncoder` writes them): one entry per
/// request, and `JSONEncoder` was most of the HAR writer's time. `HARJSONTests` holds it to the `Encodable` form.
extension HAREntry {
    /// Writes the entry's JSON object into `json`.
    public func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("startedDateTime", startedDateTime)
        json.field("time", time)
        json.beginObject("request")
        request.write(to: &json)
        json.endObject()
        json.beginObject("response")
        response.write(to: &json)
        json.endObject()
        json.beginObject("cache")
        json.endObject()
        json.beginObject("timings")
        timings.write(to: &json)
        json.endObject()
        json.field("serverIPAddress", serverIPAddress)
        json.field("connection", connection)
        json.field("_rule", _rule)
        json.field("_client", _client)
        json.field("comment", comment)
        json.field("_resourceType", _resourceType)
        if let _webSocketMessages {
            json.beginArray("_webSocketMessages")
            for message in _webSocketMessages { message.write(to: &json) }
            json.endArray()
        }
        json.endObject()
    }
}

extension HARRequest {
    fileprivate func write(to json: inout JSONWriter) {
        json.field("method", method)
        json.field("url", url)
        json.field("httpVersion", httpVersion)
        HARCookie.write(cookies, to: &json)
        HARNameValue.write(headers, as: "headers", to: &json)
        HARNameValue.write(queryString, as: "queryString", to: &json)
        if let postData {
            json.beginObject("postData")
            json.field("mimeType", postData.mimeType)
            HARNameValue.write(postData.params, as: "params", to: &json)
            json.field("text", postData.text)
            json.field("comment", postData.comment)
            json.field("_encoding", postData._encoding)
            json.field("_truncated", postData._truncated)
            json.endObject()
        }
        json.field("headersSize", headersSize)
        json.field("bodySize", bodySize)
    }
}

extension HARResponse {
    fileprivate func write(to json: inout JSONWriter) {
        json.field("status", status)
        json.field("statusText", statusText)
        json.field("httpVersion", httpVersion)
        HARCookie.write(cookies, to: &json)
        HARNameValue.write(headers, as: "headers", to: &json)
        json.beginObject("content")
        json.field("size", content.size)
        json.field("mimeType", content.mimeType)
        json.field("text", content.text)
        json.field("encoding", content.encoding)
        json.field("comment", content.comment)
        json.field("_truncated", content._truncated)
        json.endObject()
        json.field("redirectURL", redirectURL)
        json.field("headersSize", headersSize)
        json.field("bodySize", bodySize)
        json.field("_error", _error)
        if let _trailers { HARNameValue.write(_trailers, as: "_trailers", to: &json) }
    }
}

extension HARTimings {
    fileprivate func write(to json: inout JSONWriter) {
        json.field("blocked", blocked)
        json.field("dns", dns)
        json.field("connect", connect)
        json.field("send", send)
        json.field("wait", wait)
        json.field("receive", receive)
        json.field("ssl", ssl)
    }
}

extension HARNameValue {
    fileprivate static func write(_ pairs: [HARNameValue], as key: StaticString, to json: inout JSONWriter) {
        json.beginArray(key)
        for pair in pairs {
            json.beginObject()
            json.field("name", pair.name)
            json.field("value", pair.value)
            json.endObject()
        }
        json.endArray()
    }
}

extension HARCookie {
    fileprivate static func write(_ cookies: [HARCookie], to json: inout JSONWriter) {
        json.beginArray("cookies")
        for cookie in cookies {
            json.beginObject()
            json.field("name", cookie.name)
            json.field("value", cookie.value)
            json.field("path", cookie.path)
            json.field("domain", cookie.domain)
            json.field("expires", cookie.expires)
            json.field("httpOnly", cookie.httpOnly)
            json.field("secure", cookie.secure)
            json.endObject()
        }
        json.endArray()
    }
}

extension HARWebSocketMessage {
    fileprivate func write(to json: inout JSONWriter) {
        json.beginObject()
        json.field("type", type)
        json.field("time", time)
        json.field("opcode", opcode)
        json.field("data", data)
        json.field("_size", _size)
        json.field("_truncated", _truncated)
        json.field("_compressed", _compressed)
        json.field("_closeCode", _closeCode)
        json.field("_closeReason", _closeReason)
        json.field("_malformed", _malformed)
        json.endObject()
    }
}
