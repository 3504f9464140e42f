/// The HTTP `CONNECT` exchange that turns a connection to a proxy into a tunnel to a server.
enum ProxyTunnel {
    /// Asks the proxy on `socket` for a tunnel to `target`; returns any bytes read past the response head.
    static func open(through socket: TCPClientSocket, to target: HostAndPort) throws(PinsError) -> [UInt8] {
        // Mitm-Proxy-Probe (MITMCore.ProxyProbe.headerName) tells a mitm-proxy on the path that this is its own check, not app traffic.
        let request =
            "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\nUser-Agent: mitm-proxy-pins\r\nMitm-Proxy-Probe: pins\r\n\r\n"
        let stage = "while asked to CONNECT to \(target)"
        try socket.sendAll(Array(request.utf8), stage: stage)
        var received: [UInt8] = []
        let terminator: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let end = headEnd(received, terminator: terminator) {
                let head = String(decoding: received[..<end], as: UTF8.self)
                let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
                let parts = statusLine.split(separator: " ", maxSplits: 2)
                guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let code = Int(parts[1]) else {
                    throw PinsError(
                        "\(socket.name) is not an HTTP proxy: it answered CONNECT with \"\(statusLine.prefix(80))\"")
                }
                guard (200..<300).contains(code) else {
                    throw PinsError("\(socket.name) refused to CONNECT to \(target): \"\(statusLine)\"")
                }
                return Array(received[(end + terminator.count)...])
            }
            guard received.count < 64 * 1024 else {
                throw PinsError("\(socket.name) sent a response head over 64 KiB to CONNECT \(target)")
            }
            let bytes = try socket.receive(stage: stage)
            guard !bytes.isEmpty else {
                throw PinsError("\(socket.name) closed the connection when asked to CONNECT to \(target)")
            }
            received += bytes
        }
    }

    private static func headEnd(_ bytes: [UInt8], terminator: [UInt8]) -> Int? {
        guard bytes.count >= terminator.count else { return nil }
        return (0...(bytes.count - terminator.count)).first {
            bytes[$0..<$0 + terminator.count].elementsEqual(terminator)
        }
    }
}
