/// What an opening handshake agreed on, read from the request and the server's answer: whether the connection
/// now carries WebSocket frames, and which extension changes how they read.
package struct WebSocketHandshake: Sendable, Equatable {
    /// `permessage-deflate` as the server accepted it (RFC 7692), or nil.
    package var deflate: WebSocketDeflate?
    /// Other extensions the server accepted; their frame bits cannot be read by the proxy.
    package var otherExtensions: [String] = []

    /// A handshake with the given extensions.
    package init(deflate: WebSocketDeflate? = nil, otherExtensions: [String] = []) {
        self.deflate = deflate
        self.otherExtensions = otherExtensions
    }

    /// The WebSocket an HTTP/1.1 `101 Switching Protocols` opened, or nil when it switched to something else.
    package static func http1(request: HTTPRequestHead, response: HTTPResponseHead) -> WebSocketHandshake? {
        guard response.status == 101, response.headers.tokens("upgrade").contains("websocket"),
            request.headers.tokens("upgrade").contains("websocket")
        else { return nil }
        return WebSocketHandshake(extensionsHeader: response.headers)
    }

    /// The WebSocket an HTTP/2 extended CONNECT (RFC 8441, `:protocol websocket`) opened once the server
    /// answered `status` with `headers`, or nil when it refused.
    package static func extendedConnect(status: Int, headers: HTTPHeaders) -> WebSocketHandshake? {
        guard (200..<300).contains(status) else { return nil }
        return WebSocketHandshake(extensionsHeader: headers)
    }

    /// The extensions listed in the server's `Sec-WebSocket-Extensions`.
    init(extensionsHeader headers: HTTPHeaders) {
        for element in headers.values("sec-websocket-extensions").flatMap({ $0.split(separator: ",") }) {
            let parameters = element.split(separator: ";").map {
                HTTPSyntax.asciiLowercased(bytes: HTTPSyntax.trimmingOWS($0.utf8))
            }
            guard let name = parameters.first, !name.isEmpty else { continue }
            if name == "permessage-deflate" && deflate == nil {
                let names = Set(parameters.dropFirst().map { String($0.split(separator: "=").first ?? "") })
                deflate = WebSocketDeflate(
                    serverNoContextTakeover: names.contains("server_no_context_takeover"),
                    clientNoContextTakeover: names.contains("client_no_context_takeover"))
            } else {
                otherExtensions.append(name)
            }
        }
    }
}

/// `permessage-deflate` parameters that matter for reading: whether each side starts every message afresh.
package struct WebSocketDeflate: Sendable, Equatable {
    /// The server compresses each message on its own.
    package var serverNoContextTakeover: Bool
    /// The client compresses each message on its own.
    package var clientNoContextTakeover: Bool

    /// The parameters as negotiated.
    package init(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
    }
}
