/// The client side of a SOCKS5 connection up to its CONNECT (RFC 1928, with RFC 1929 user/password
/// authentication), as a state machine: bytes in, actions out. The caller checks credentials, reaches the
/// target and then sends `reply(_:)`; the tunnel's bytes follow.
package struct SOCKS5Handshake: Sendable, Equatable {
    package enum State: Sendable, Equatable {
        /// Waiting for the version and the methods the client offers.
        case greeting
        /// Waiting for the user name and password.
        case authenticating
        /// Credentials given; waiting for the caller's check.
        case checkingCredentials
        /// Waiting for the request.
        case request
        /// The client asked to CONNECT; the caller replies.
        case connectRequested
        /// The handshake failed; the connection is to be closed once the last reply is out.
        case failed
    }

    package enum Action: Sendable, Equatable {
        /// Bytes for the client.
        case send([UInt8])
        /// The client gave these credentials: answer with `credentialsChecked(_:)`.
        case checkCredentials(user: String, password: String)
        /// The client asks for a tunnel to `host:port` (a validated host name, or an IP address as text).
        case connect(host: String, port: Int)
        /// The handshake cannot go on: close the connection after what was sent, and log `reason`.
        case fail(reason: String)
    }

    /// The reply codes of RFC 1928 §6 the proxy sends.
    package enum Reply: UInt8, Sendable {
        case succeeded = 0
        case generalFailure = 1
        case notAllowed = 2
        case hostUnreachable = 4
        case connectionRefused = 5
        case commandNotSupported = 7
        case addressTypeNotSupported = 8
    }

    package private(set) var state = State.greeting
    private let requiresCredentials: Bool
    private var buffer: [UInt8] = []

    /// The longest greeting, authentication or request (a 255-byte name or password, a 255-byte domain name).
    static let maximumMessage = 2 + 255 + 1 + 255

    package init(requiresCredentials: Bool) {
        self.requiresCredentials = requiresCredentials
    }

    /// The first byte of a SOCKS5 greeting (an HTTP request starts with a letter).
    package static let version: UInt8 = 5

    /// Takes bytes from the client.
    package mutating func receive(_ bytes: [UInt8]) -> [Action] {
        buffer += bytes
        var actions: [Action] = []
        while true {
            let step: [Action]?
            switch state {
            case .greeting: step = parseGreeting()
            case .authenticating: step = parseCredentials()
            case .request: step = parseRequest()
            case .checkingCredentials, .connectRequested, .failed: return actions
            }
            guard let step else {
                if buffer.count > Self.maximumMessage {
                    return actions + fail(.generalFailure, "the SOCKS5 message is too long")
                }
                return actions
            }
            actions += step
        }
    }

    /// The caller's verdict on the credentials the client gave.
    package mutating func credentialsChecked(_ accepted: Bool) -> [Action] {
        guard state == .checkingCredentials else { return [] }
        guard accepted else {
            state = .failed
            return [.send([1, 1]), .fail(reason: "SOCKS5 authentication failed: wrong user name or password")]
        }
        state = .request
        return [.send([1, 0])] + receive([])
    }

    /// The reply to a CONNECT (the bound address is not meaningful for a proxy that relays: zeros).
    package static func reply(_ code: Reply) -> [UInt8] {
        [version, code.rawValue, 0, 1, 0, 0, 0, 0, 0, 0]
    }

    /// Bytes the client sent after its request (the start of the tunnel), handed over once.
    package mutating func takeBuffered() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }

    // MARK: parsing

    private mutating func parseGreeting() -> [Action]? {
        guard buffer.count >= 2 else { return nil }
        guard buffer[0] == Self.version else {
            return fail(nil, "not SOCKS5 (version \(buffer[0]))")
        }
        let count = Int(buffer[1])
        guard buffer.count >= 2 + count else { return nil }
        let methods = Set(buffer[2..<2 + count])
        buffer.removeFirst(2 + count)
        let method: UInt8 = requiresCredentials ? 2 : 0
        guard methods.contains(method) else {
            state = .failed
            let why =
                requiresCredentials
                ? "SOCKS5 authentication required (--proxy-auth): the client offers no user name and password"
                : "the SOCKS5 client offers no method the proxy speaks (it needs no authentication)"
            return [.send([Self.version, 0xFF]), .fail(reason: why)]
        }
        state = requiresCredentials ? .authenticating : .request
        return [.send([Self.version, method])]
    }

    private mutating func parseCredentials() -> [Action]? {
        guard buffer.count >= 2 else { return nil }
        guard buffer[0] == 1 else { return failAuthentication("bad SOCKS5 authentication version \(buffer[0])") }
        let userLength = Int(buffer[1])
        guard buffer.count >= 2 + userLength + 1 else { return nil }
        let passwordLength = Int(buffer[2 + userLength])
        guard buffer.count >= 3 + userLength + passwordLength else { return nil }
        let user = String(decoding: buffer[2..<2 + userLength], as: UTF8.self)
        let password = String(decoding: buffer[3 + userLength..<3 + userLength + passwordLength], as: UTF8.self)
        buffer.removeFirst(3 + userLength + passwordLength)
        state = .checkingCredentials
        return [.checkCredentials(user: user, password: password)]
    }

    private mutating func failAuthentication(_ reason: String) -> [Action] {
        state = .failed
        return [.send([1, 1]), .fail(reason: reason)]
    }

    private mutating func parseRequest() -> [Action]? {
        guard buffer.count >= 4 else { return nil }
        guard buffer[0] == Self.version else { return fail(.generalFailure, "bad SOCKS5 request version \(buffer[0])") }
        let command = buffer[1]
        let addressType = buffer[3]
        let addressLength: Int
        switch addressType {
        case 1: addressLength = 4
        case 3:
            guard buffer.count >= 5 else { return nil }
            addressLength = 1 + Int(buffer[4])
        case 4: addressLength = 16
        default:
            return fail(
                .addressTypeNotSupported, "SOCKS5 address type \(addressType) is not one of IPv4, domain name, IPv6")
        }
        guard buffer.count >= 4 + addressLength + 2 else { return nil }
        let address = Array(buffer[4..<4 + addressLength])
        let port = Int(buffer[4 + addressLength]) << 8 | Int(buffer[5 + addressLength])
        buffer.removeFirst(4 + addressLength + 2)
        guard command == 1 else {
            let name = command == 2 ? "BIND" : command == 3 ? "UDP ASSOCIATE" : "command \(command)"
            return fail(.commandNotSupported, "SOCKS5 \(name) is not supported (only CONNECT)")
        }
        let host: String
        switch addressType {
        case 1:
            host = address.map(String.init).joined(separator: ".")
        case 4:
            host = IPAddress(bytes: address).description
        default:
            let name = String(decoding: address.dropFirst(), as: UTF8.self)
            guard let valid = HostName.validate(name) else {
                return fail(.hostUnreachable, "SOCKS5 CONNECT to an invalid host name \"\(name.prefix(80))\"")
            }
            host = valid
        }
        guard port > 0 else { return fail(.generalFailure, "SOCKS5 CONNECT to port 0") }
        state = .connectRequested
        return [.connect(host: host, port: port)]
    }

    private mutating func fail(_ code: Reply?, _ reason: String) -> [Action] {
        state = .failed
        buffer = []
        return (code.map { [Action.send(Self.reply($0))] } ?? []) + [.fail(reason: reason)]
    }
}
