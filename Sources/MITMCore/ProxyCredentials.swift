import Foundation

/// The user name and password a client must send to use the proxy (`--proxy-auth USER:PASS`), as HTTP Basic
/// proxy authentication (RFC 9110 §11.7, RFC 7617). Compared in constant time, and never printed: the
/// descriptions name the user only.
public struct ProxyCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The user name.
    public let user: String
    /// `user:password` in UTF-8, what a Basic token decodes to.
    private let expected: [UInt8]

    /// The realm the proxy names in its challenge.
    public static let realm = "mitm-proxy"

    /// Parses `USER:PASS` (the password may contain `:`; the user may not, as in RFC 7617).
    public init(parsing text: String) throws(ProxyCredentialsError) {
        guard let colon = text.firstIndex(of: ":") else { throw .noColon }
        let user = String(text[..<colon])
        let password = text[text.index(after: colon)...]
        guard !user.isEmpty else { throw .emptyUser }
        guard !password.isEmpty else { throw .emptyPassword }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .controlCharacter
        }
        self.user = user
        expected = Array(text.utf8)
    }

    /// The `Proxy-Authenticate` value of a `407`.
    public static var challenge: String { "Basic realm=\"\(realm)\", charset=\"UTF-8\"" }

    /// Whether a `Proxy-Authorization` value carries these credentials. Every byte of the expected credentials is
    /// compared whatever the value holds, so the time taken does not tell how much of a guess was right.
    public func accepts(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: parts[1].trimmingCharacters(in: .whitespaces))
        else { return false }
        return Self.constantTimeEqual(Array(decoded), expected)
    }

    /// Whether a user name and password given apart (SOCKS5, RFC 1929) are these credentials, compared the same way.
    public func accepts(user: String, password: String) -> Bool {
        // A user name with a colon would shift the split between user and password.
        let matches = Self.constantTimeEqual(Array("\(user):\(password)".utf8), expected)
        return matches && !user.contains(":")
    }

    private static func constantTimeEqual(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt(bitPattern: given.count ^ expected.count)
        for index in expected.indices {
            let byte = index < given.count ? given[index] : 0
            difference |= UInt(byte ^ expected[index])
        }
        return difference == 0
    }

    /// `user:password` percent-encoded for the user-info part of a proxy URL (`http://USERINFO@127.0.0.1:8888`), as a
    /// client command run through the proxy is given it in `HTTPS_PROXY`.
    /// The `Proxy-Authorization` value these credentials are sent with.
    public var basicAuthorization: String { "Basic " + Data(expected).base64EncodedString() }

    public var urlUserInfo: String {
        let text = String(decoding: expected, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return "" }
        let encode = { (part: Substring) in
            part.addingPercentEncoding(withAllowedCharacters: Self.unreservedCharacters) ?? ""
        }
        return encode(text[..<colon]) + ":" + encode(text[text.index(after: colon)...])
    }

    private static let unreservedCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `user (password hidden)`.
    public var description: String { "\(user) (password hidden)" }
    public var debugDescription: String { description }
}

/// Why `--proxy-auth` was rejected (the message never repeats the value).
public enum ProxyCredentialsError: Error, Sendable, Equatable, CustomStringConvertible {
    case noColon
    case emptyUser
    case emptyPassword
    case controlCharacter

    public var description: String {
        switch self {
        case .noColon: "expected USER:PASSWORD"
        case .emptyUser: "the user name is empty; expected USER:PASSWORD"
        case .emptyPassword: "the password is empty; expected USER:PASSWORD"
        case .controlCharacter: "the credentials contain a control character (a line break?)"
        }
    }
}
